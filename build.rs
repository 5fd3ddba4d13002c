//! Embeds the team's solver library (`dsl/solvers.py`) and the demo tasks (`dsl/demo/*.json`
//! with `dsl/demo/solvers.py`) into the binary, so `arcbatch demo` needs no file outside it;
//! and compiles the CUDA kernels (`kernels/*.cu`) as host C++ for the emulated device
//! (`src/device/emu.rs`), through the portability header `kernels/portable.h`; and generates the
//! kernel table from those sources (`kernels.rs` in `OUT_DIR`: the [`Entry`] enum, each entry
//! point's symbol, parameter kinds and family; `kernels_host.rs`: the host builds' bindings), so
//! that a kernel's `KERNEL(name, params...)` declaration is the only place that describes it.

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
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let (table, host) = kernel_table(&sources);
    std::fs::write(out.join("kernels.rs"), table).expect("OUT_DIR is writable");
    std::fs::write(out.join("kernels_host.rs"), host).expect("OUT_DIR is writable");
}

/// One `KERNEL(symbol, params...)` declaration: the symbol and whether each parameter is a
/// pointer (else a `u32` scalar).
struct Declared {
    symbol: String,
    pointers: Vec<bool>,
}

/// The declarations of a kernel source, in order.
fn declarations(path: &Path, source: &str) -> Vec<Declared> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("KERNEL(") {
        if at > 0 && !source[..at].ends_with('\n') {
            continue;
        }
        let rest = &source[at + "KERNEL(".len()..];
        let end = rest
            .find(')')
            .unwrap_or_else(|| panic!("{}: an unclosed KERNEL(", path.display()));
        let mut parts = rest[..end].split(',').map(str::trim);
        let symbol = parts.next().unwrap_or_default().to_string();
        assert!(
            symbol.starts_with("arcb_") && symbol[5..].bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{}: kernel {symbol:?} is not named arcb_<lowercase>",
            path.display()
        );
        let pointers = parts
            .map(|p| {
                assert!(
                    p.contains('*') || p.starts_with("u32 "),
                    "{}: {symbol}: parameter {p:?} is neither a pointer nor a u32",
                    path.display()
                );
                p.contains('*')
            })
            .collect();
        found.push(Declared { symbol, pointers });
    }
    found
}

/// The Rust of the kernel table (for `src/batch/kernel.rs`) and of the host bindings (for
/// `src/device/emu.rs`).
fn kernel_table(sources: &[std::path::PathBuf]) -> (String, String) {
    let mut entries: Vec<(String, Declared)> = Vec::new();
    let mut families = String::from(
        "/// Every kernel family, one per file of `kernels/`.\npub const FAMILIES: &[KernelFamily] = &[\n",
    );
    for path in sources.iter().filter(|p| p.extension().is_some_and(|x| x == "cu")) {
        let source = std::fs::read_to_string(path).expect("a kernel source");
        let file = path.file_name().expect("a file").to_string_lossy().to_string();
        let declared = declarations(path, &source);
        let variants: Vec<String> = declared.iter().map(|d| variant(&d.symbol)).collect();
        let listed: Vec<String> = variants.iter().map(|v| format!("Entry::{v}")).collect();
        writeln!(
            families,
            "    KernelFamily {{ file: {file:?}, source: include_str!({:?}), entries: &[{}] }},",
            path.display().to_string(),
            listed.join(", ")
        )
        .expect("write to a String");
        entries.extend(variants.into_iter().zip(declared));
    }
    families.push_str("];\n");
    let n = entries.len();
    let mut table = String::from(
        "/// A kernel entry point, one per `KERNEL(arcb_name, ...)` declaration in `kernels/`.\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\npub enum Entry {\n",
    );
    for (v, d) in &entries {
        writeln!(table, "    /// `{}`.\n    {v},", d.symbol).expect("write to a String");
    }
    table.push_str("}\n\nimpl Entry {\n    /// Every entry point.\n");
    let all: Vec<String> = entries.iter().map(|(v, _)| format!("Entry::{v}")).collect();
    writeln!(table, "    pub const ALL: [Entry; {n}] = [{}];", all.join(", ")).expect("write to a String");
    let symbols: Vec<String> = entries.iter().map(|(_, d)| format!("{:?}", d.symbol)).collect();
    writeln!(
        table,
        "    /// The entry point's name in the CUDA source.\n    pub fn symbol(self) -> &'static str {{\n        [{}][self as usize]\n    }}",
        symbols.join(", ")
    )
    .expect("write to a String");
    let params: Vec<String> = entries
        .iter()
        .map(|(_, d)| {
            let kinds: Vec<&str> = d
                .pointers
                .iter()
                .map(|&p| if p { "Param::Ptr" } else { "Param::U32" })
                .collect();
            format!("&[{}]", kinds.join(", "))
        })
        .collect();
    writeln!(
        table,
        "    /// The kinds of its parameters, in order, as its `KERNEL(...)` declaration has them.\n    pub fn params(self) -> &'static [Param] {{\n        const PARAMS: [&[Param]; {n}] = [{}];\n        PARAMS[self as usize]\n    }}\n}}\n",
        params.join(", ")
    )
    .expect("write to a String");
    table.push_str(&families);
    let mut host = String::from("extern \"C\" {\n");
    for (_, d) in &entries {
        writeln!(host, "    fn {}_host(ctx: *const EmuCtx, args: *const u64);", d.symbol).expect("write to a String");
    }
    let hosts: Vec<String> = entries.iter().map(|(_, d)| format!("{}_host", d.symbol)).collect();
    writeln!(
        host,
        "}}\n\n/// The host build of each entry point, indexed as [`Entry::ALL`].\nconst HOST_KERNELS: [HostKernel; {n}] = [{}];",
        hosts.join(", ")
    )
    .expect("write to a String");
    (table, host)
}

/// The enum variant of a symbol: `arcb_colorcount` -> `Colorcount`, `arcb_foo_bar` -> `FooBar`.
fn variant(symbol: &str) -> String {
    symbol["arcb_".len()..]
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
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
