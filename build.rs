//! Embeds the team's solver library (`dsl/solvers.py`) and the demo tasks (`dsl/demo/*.json`
//! with `dsl/demo/solvers.py`) into the binary, so `arcbatch demo` needs no file outside it;
//! and compiles the CUDA kernels (`kernels/*.cu`) as host C++ for the emulated device
//! (`src/device/emu.rs`), through the portability header `kernels/portable.h`.

use std::fmt::Write;
use std::path::Path;

fn main() {
    embed();
    kernels();
}

/// The host build of the kernel sources: one static library, entry points `<name>_host`.
fn kernels() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut sources: Vec<_> = std::fs::read_dir(&dir)
        .expect("kernels/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    sources.sort();
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .include(&dir)
        .flag("-x")
        .flag("c++")
        .flag_if_supported("-fno-exceptions")
        .flag_if_supported("-Wno-maybe-uninitialized")
        .opt_level(2);
    for s in sources.iter().filter(|p| p.extension().is_some_and(|x| x == "cu")) {
        println!("cargo:rerun-if-changed={}", s.display());
        build.file(s);
    }
    build.compile("arcbatch_kernels");
}

fn embed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl");
    println!("cargo:rerun-if-changed={}", root.display());
    let demo = root.join("demo");
    println!("cargo:rerun-if-changed={}", demo.display());
    let mut tasks: Vec<_> = std::fs::read_dir(&demo)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    tasks.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "json"));
    tasks.sort();
    let mut out =
        String::from("/// The demo tasks: (file name, JSON text).\npub const DEMO_TASKS: &[(&str, &str)] = &[\n");
    for t in &tasks {
        let name = t.file_name().expect("a file").to_string_lossy();
        writeln!(out, "    ({name:?}, include_str!({:?})),", t.display().to_string()).expect("write to a String");
    }
    out.push_str("];\n");
    for (constant, file) in [("LIBRARY", "solvers.py"), ("DEMO_SOLVERS", "demo/solvers.py")] {
        let path = root.join(file).display().to_string();
        writeln!(
            out,
            "/// `dsl/{file}`.\npub const {constant}: &str = include_str!({path:?});"
        )
        .expect("write to a String");
    }
    let dest = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
