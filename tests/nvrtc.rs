//! The GPU side without a GPU: every kernel compiles with NVRTC to a CUBIN for each target
//! architecture (sm_60 P100, sm_75 T4, sm_89 L4); the GPU backends fall back to the CPU, with
//! the CPU's results, where there is no GPU; `gpu-info` says why.
//!
//! NVRTC comes from `ARCBATCH_NVRTC` (`.ci/run` installs PyPI's `nvidia-cuda-nvrtc-cu12` and
//! sets it) or the system. Without it the compilation test skips with a note, except under
//! `CI=true`, where it fails.

use std::process::Command;

use arcbatch::batch::Backend;
use arcbatch::batt::{Config, Plan};
use arcbatch::device::cuda::gpus;
use arcbatch::device::nvrtc::{nvrtc, Nvrtc, NvrtcError, TARGETS};
use arcbatch::device::select::{backend, Kind};
use arcbatch::device::{Entry, FAMILIES};
use arcbatch::program::parse_file;
use arcbatch::Chain;

fn compiler() -> Option<&'static Nvrtc> {
    match nvrtc() {
        Ok(c) => Some(c),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!(
                "CI=true but there is no NVRTC to compile the kernels with: {}",
                Chain(&why)
            )
        }
        Err(why) => {
            eprintln!("note: skipping the NVRTC compilation test: {}", Chain(&why));
            None
        }
    }
}

#[test]
fn every_kernel_compiles_for_every_target_architecture() {
    let Some(nvrtc) = compiler() else { return };
    assert_eq!(nvrtc.version.0, 12, "CUDA 12.x NVRTC (13 cannot target sm_60)");
    let mut built = Vec::new();
    for family in FAMILIES {
        for arch in TARGETS {
            let cubin = nvrtc
                .compile(family.file, &family.nvrtc_source(), arch)
                .unwrap_or_else(|e| panic!("{} for sm_{arch}:\n{e}", family.file));
            assert!(cubin.image.len() > 100, "{} for sm_{arch}: an empty CUBIN", family.file);
            for entry in family.entries {
                let info = cubin
                    .entries
                    .iter()
                    .find(|e| e.name == entry.symbol())
                    .unwrap_or_else(|| panic!("{} for sm_{arch}: no ptxas report for {}", family.file, entry.symbol()));
                assert!(info.registers > 0, "{info:?}");
                built.push((entry.symbol(), arch));
            }
        }
    }
    assert_eq!(
        built.len(),
        Entry::ALL.len() * TARGETS.len(),
        "every entry point on every target"
    );
}

#[test]
fn a_kernel_that_does_not_compile_is_an_error_with_the_compiler_log() {
    let Some(nvrtc) = compiler() else { return };
    let e = nvrtc
        .compile("broken.cu", "extern \"C\" __global__ void k() { undeclared = 1; }", 75)
        .unwrap_err();
    assert!(matches!(e, NvrtcError::Compile { arch: 75, .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("broken.cu") && e.contains("undeclared"), "{e}");
}

#[test]
fn without_a_gpu_the_gpu_backends_run_on_the_cpu_with_its_results() {
    let Err(why) = gpus() else {
        eprintln!("note: this machine has a GPU; the no-GPU fallback is not exercised");
        return;
    };
    assert!(!why.to_string().is_empty());
    let programs = parse_file("demo/solvers.py", arcbatch::embedded::DEMO_SOLVERS).expect("parse");
    let tasks = arcbatch::embedded::demo_tasks().tasks;
    let plan = Plan::new(&programs, &[], &tasks, Config::default()).expect("plan");
    let run = |b: &dyn Backend| plan.run(b, &|| ()).to_json()["matches"].clone();
    let expected = run(backend(Kind::Cpu, None).expect("cpu").as_ref());
    for kind in [Kind::Gpu, Kind::Auto] {
        let b = backend(kind, None).expect("a backend, whatever the machine");
        assert_eq!(b.name(), "cpu", "{kind:?} without a GPU");
        assert_eq!(run(b.as_ref()), expected, "{kind:?}");
    }
}

#[test]
fn gpu_info_names_the_devices_or_says_why_there_are_none() {
    let out = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .arg("gpu-info")
        .output()
        .expect("run gpu-info");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    match gpus() {
        Ok(list) => assert!(
            text.starts_with(&format!("GPUs: {} (driver from ", list.len())),
            "{text}"
        ),
        Err(why) => assert!(text.starts_with(&format!("GPUs: none ({})", Chain(why))), "{text}"),
    }
    match nvrtc() {
        Ok(n) => {
            assert!(
                text.contains(&format!("NVRTC: {}.{}", n.version.0, n.version.1)),
                "{text}"
            );
            // The targets, and the architecture of each GPU here.
            let mut archs = TARGETS.to_vec();
            if let Ok(list) = gpus() {
                archs.extend(list.iter().map(|d| d.info.arch));
            }
            archs.sort_unstable();
            archs.dedup();
            for arch in &archs {
                assert!(text.contains(&format!("sm_{arch}")), "{text}");
            }
            assert!(!text.contains("FAILED"), "{text}");
            assert_eq!(text.matches(" ok ").count(), Entry::ALL.len() * archs.len(), "{text}");
        }
        Err(why) => assert!(text.contains(&format!("NVRTC: none ({})", Chain(&why))), "{text}"),
    }
}
