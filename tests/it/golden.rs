//! Golden tests: every launch file under sample-kernels/ runs to the end and its outputs
//! equal the committed expected bytes (computed by the kernel's reference model).

use std::path::{Path, PathBuf};

use vdb::exec::{run_to_end, Interpreter, NullObserver};
use vdb::launch::raw;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// A scratch folder for one test's outputs, emptied first: under the target folder's `tmp/`
/// (Cargo's for integration tests), so runs reuse it rather than leave folders behind.
pub fn scratch(name: &str) -> PathBuf {
    let dir = root().join(env!("CARGO_TARGET_TMPDIR")).join(format!("it-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The skl launch file of the kernel in `dir` (under the project root) changed by `edit`, its
/// `skl/` and `in/` paths made absolute, written into scratch directory `name`.
pub fn edited_launch(dir: &str, name: &str, edit: impl FnOnce(String) -> String) -> PathBuf {
    let kernel = root().join(dir);
    let text = edit(std::fs::read_to_string(kernel.join("skl.launch.json")).expect("launch"));
    let base = kernel.to_string_lossy();
    let text = text.replace("\"skl/", &format!("\"{base}/skl/")).replace("\"in/", &format!("\"{base}/in/"));
    let path = scratch(name).join("edited.launch.json");
    std::fs::write(&path, text).expect("write launch");
    path
}

/// The OpenCL Collatz sample with half its output buffer, written into scratch directory
/// `name`: the scatter of group 8 of 16 faults.
pub fn half_output_collatz(name: &str) -> PathBuf {
    edited_launch("sample-kernels/opencl/collatz", name, |t| t.replace("\"size\": 4096", "\"size\": 2048"))
}

pub fn hand_launches() -> Vec<PathBuf> {
    let dir = root().join("sample-kernels/hand");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("sample-kernels/hand")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".launch.json"))
        .collect();
    files.sort();
    files
}

#[test]
fn hand_written_kernels_match_their_reference_model() {
    let launches = hand_launches();
    assert!(launches.len() >= 6, "expected the six hand-written kernels, found {}", launches.len());
    for path in launches {
        let mut launch = raw::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let interp = Interpreter::new(launch.program.clone());
        let result = run_to_end(&interp, &mut launch.machine, &mut launch.scheduler, &mut NullObserver);
        if let Err(f) = &result {
            panic!("{}: {}", path.display(), f.render(&launch.program));
        }
        let name = path.file_name().expect("name").to_string_lossy().replace(".launch.json", "");
        let out = scratch(&name);
        raw::write_outputs(&launch.program, &launch.machine, &launch.outputs, &out).expect("outputs");
        for output in &launch.outputs {
            let got = std::fs::read(out.join(&output.path)).expect("output written");
            let file = Path::new(&output.path).file_name().expect("file name");
            let expected =
                std::fs::read(root().join("sample-kernels/hand/expected").join(file)).expect("expected");
            assert_eq!(got, expected, "{}: {}", path.display(), output.path);
        }
    }
}
