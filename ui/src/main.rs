//! The `vdb` command line.

fn main() {
    println!("vdb");
}
