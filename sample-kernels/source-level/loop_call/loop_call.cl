// Source-level debugging sample: a loop, a branch, a helper IGC inlines (weigh) and one it
// calls (mix). Compiled with -g, so its vISA carries FILE and LOC.
int weigh(int x)
{
    int w = x * 3;
    if (w > 20)
        w = w - 7;
    return w;
}

__attribute__((noinline)) int mix(int a, int b)
{
    int m = a ^ b;
    return m + 1;
}

__kernel void loop_call(__global const int *in, __global int *out)
{
    int i = get_global_id(0);
    int v = in[i];
    int acc = 0;
    for (int j = 0; j < v; j++) {
        acc += weigh(j);
    }
    if (acc > 50)
        acc = acc / 2;
    else
        acc = mix(acc, i);
    out[i] = acc;
}
