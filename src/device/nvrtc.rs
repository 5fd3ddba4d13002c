//! NVRTC, NVIDIA's run-time compiler: CUDA C source to a CUBIN for one GPU architecture. It
//! runs without a GPU, so CI compiles every kernel for every target here (DESIGN.md §5).
//!
//! The library is opened at run time, never linked: from the file `ARCBATCH_NVRTC` names (for
//! instance the `libnvrtc.so.12` of PyPI's `nvidia-cuda-nvrtc-cu12`), else as
//! [`library::locate`] finds it (the loader path, then CUDA's usual directories). Only CUDA
//! 12.x: CUDA 13's NVRTC no longer targets sm_60 (P100).

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

use cudarc::nvrtc::sys;

use super::library::{self, LoadError, NotFound};

/// The GPU architectures arcbatch is built for: P100 (sm_60), T4 (sm_75), L4 (sm_89).
pub const TARGETS: [u32; 3] = [60, 75, 89];

/// The environment variable naming the NVRTC library file to use.
pub const NVRTC_ENV: &str = "ARCBATCH_NVRTC";

/// A loaded NVRTC library.
#[derive(Clone, Debug)]
pub struct Nvrtc {
    /// Major and minor version, e.g. (12, 9).
    pub version: (i32, i32),
    /// Where it was found: a file, or [`library::LOADER_PATH`].
    pub origin: String,
}

/// Why there is no NVRTC to use, or why it failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NvrtcError {
    /// The file [`NVRTC_ENV`] names does not load.
    #[error("cannot use {NVRTC_ENV}")]
    Env(#[source] LoadError),
    #[error("{NVRTC_ENV}={}: not an NVRTC 12 library", .0.display())]
    NotNvrtc12(PathBuf),
    #[error(
        "{0}; install CUDA 12 or `pip install nvidia-cuda-nvrtc-cu12` and set {NVRTC_ENV} to its lib/libnvrtc.so.12"
    )]
    Missing(NotFound),
    #[error("NVRTC {major}.{minor} from {origin}: arcbatch needs CUDA 12.x (13 cannot target sm_60)")]
    Version { major: i32, minor: i32, origin: String },
    /// An NVRTC call failed: the call, and NVRTC's text for the status it returned.
    #[error("{call}: {status}")]
    Call { call: &'static str, status: String },
    /// A string passed to NVRTC (the source, its name, an option) holds a NUL byte.
    #[error("{0} contains a NUL byte")]
    Nul(String),
    /// The source does not compile: NVRTC's status and the compiler's log.
    #[error("compiling {name} for sm_{arch}: {status}\n{log}")]
    Compile {
        name: String,
        arch: u32,
        status: String,
        log: String,
    },
}

/// What `ptxas` reports for one kernel entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryInfo {
    pub name: String,
    pub registers: u32,
    /// Static shared memory, in bytes.
    pub shared_bytes: u32,
}

/// A compiled kernel source: the CUBIN image and, per entry point, its resource use.
#[derive(Clone, Debug)]
pub struct Cubin {
    pub image: Vec<u8>,
    pub entries: Vec<EntryInfo>,
}

/// The NVRTC library, loaded once per process; `Err` says why there is none.
pub fn nvrtc() -> Result<&'static Nvrtc, NvrtcError> {
    static NVRTC: OnceLock<Result<Nvrtc, NvrtcError>> = OnceLock::new();
    NVRTC.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Nvrtc, NvrtcError> {
    // SAFETY (both lookups): only tries to open the library by its usual names.
    let present = || unsafe { sys::is_culib_present() };
    let origin = match std::env::var_os(NVRTC_ENV).filter(|path| !path.is_empty()) {
        Some(path) => {
            let path = std::path::Path::new(&path);
            library::preload(path).map_err(NvrtcError::Env)?;
            if !present() {
                return Err(NvrtcError::NotNvrtc12(path.into()));
            }
            path.display().to_string()
        }
        None => library::locate("libnvrtc.so.12", present).map_err(NvrtcError::Missing)?,
    };
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above); the out-pointers are valid.
    check(unsafe { sys::nvrtcVersion(&mut major, &mut minor) }, "nvrtcVersion")?;
    if major != 12 {
        return Err(NvrtcError::Version { major, minor, origin });
    }
    Ok(Nvrtc {
        version: (major, minor),
        origin,
    })
}

/// NVRTC's text for a status that is not success; `None` for success.
fn failure(status: sys::nvrtcResult) -> Option<String> {
    if status == sys::nvrtcResult::NVRTC_SUCCESS {
        return None;
    }
    // SAFETY: NVRTC returns a static, NUL-terminated string for every status.
    let text = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(status)) };
    Some(text.to_string_lossy().into_owned())
}

/// An NVRTC status as a `Result`, naming the call that returned it.
fn check(status: sys::nvrtcResult, call: &'static str) -> Result<(), NvrtcError> {
    match failure(status) {
        None => Ok(()),
        Some(status) => Err(NvrtcError::Call { call, status }),
    }
}

fn c_string(what: &str, text: &str) -> Result<CString, NvrtcError> {
    CString::new(text).map_err(|_| NvrtcError::Nul(what.to_string()))
}

/// An NVRTC program, destroyed when dropped.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by nvrtcCreateProgram and is destroyed only here.
        unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

impl Program {
    /// Reads a variable-size output of the program through its size and copy functions.
    fn read(
        &self,
        what: &'static str,
        size: unsafe fn(sys::nvrtcProgram, *mut usize) -> sys::nvrtcResult,
        copy: unsafe fn(sys::nvrtcProgram, *mut c_char) -> sys::nvrtcResult,
    ) -> Result<Vec<u8>, NvrtcError> {
        let mut len = 0usize;
        // SAFETY: a live program and a valid out-pointer.
        check(unsafe { size(self.0, &mut len) }, what)?;
        let mut out = vec![0u8; len];
        // SAFETY: `out` holds the `len` bytes NVRTC said it would write.
        check(unsafe { copy(self.0, out.as_mut_ptr().cast()) }, what)?;
        Ok(out)
    }

    fn log(&self) -> String {
        let log = self
            .read(
                "nvrtcGetProgramLog",
                sys::nvrtcGetProgramLogSize,
                sys::nvrtcGetProgramLog,
            )
            .unwrap_or_default();
        String::from_utf8_lossy(&log).trim_end_matches('\0').trim().to_string()
    }
}

impl Nvrtc {
    /// Compiles `source` (named `name` in messages; it includes no header) for `sm_<arch>`.
    /// An error carries the compiler's log.
    pub fn compile(&self, name: &str, source: &str, arch: u32) -> Result<Cubin, NvrtcError> {
        let source_c = c_string(name, source)?;
        let name_c = c_string("the kernel name", name)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: both strings are NUL-terminated and outlive the program (this function's
        // locals); no headers are passed.
        check(
            unsafe {
                sys::nvrtcCreateProgram(
                    &mut raw,
                    source_c.as_ptr(),
                    name_c.as_ptr(),
                    0,
                    std::ptr::null(),
                    std::ptr::null(),
                )
            },
            "nvrtcCreateProgram",
        )?;
        let program = Program(raw);
        let options = [
            format!("--gpu-architecture=sm_{arch}"),
            "--std=c++14".to_string(),
            "--ptxas-options=-v".to_string(),
        ];
        let options_c = options
            .iter()
            .map(|o| c_string("an option", o))
            .collect::<Result<Vec<_>, _>>()?;
        let option_ptrs: Vec<*const c_char> = options_c.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: a live program; `option_ptrs` holds `options.len()` valid C strings.
        let status = unsafe { sys::nvrtcCompileProgram(program.0, option_ptrs.len() as c_int, option_ptrs.as_ptr()) };
        let log = program.log();
        if let Some(status) = failure(status) {
            return Err(NvrtcError::Compile {
                name: name.to_string(),
                arch,
                status,
                log,
            });
        }
        let image = program.read("nvrtcGetCUBIN", sys::nvrtcGetCUBINSize, sys::nvrtcGetCUBIN)?;
        Ok(Cubin {
            image,
            entries: parse_ptxas_log(&log),
        })
    }
}

/// The per-entry resource lines of `ptxas -v` output:
/// `Compiling entry function 'NAME' for 'sm_75'` followed by
/// `Used N registers, M bytes smem, ...`.
fn parse_ptxas_log(log: &str) -> Vec<EntryInfo> {
    let mut entries: Vec<EntryInfo> = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            entries.push(EntryInfo {
                name,
                registers: 0,
                shared_bytes: 0,
            });
        } else if let (Some(entry), Some(used)) = (entries.last_mut(), line.split("Used ").nth(1)) {
            for part in used.split(',') {
                let mut words = part.split_whitespace();
                let n = words.next().and_then(|w| w.parse::<u32>().ok()).unwrap_or(0);
                match (words.next(), words.next()) {
                    (Some("registers"), _) => entry.registers = n,
                    (Some("bytes"), Some("smem")) => entry.shared_bytes = n,
                    _ => {}
                }
            }
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_resource_lines_are_read_per_entry() {
        let log = "ptxas info    : 0 bytes gmem\n\
                   ptxas info    : Compiling entry function 'ab_ofcolor' for 'sm_75'\n\
                   ptxas info    : Function properties for ab_ofcolor\n\
                   ptxas info    : Used 12 registers, 352 bytes smem, 376 bytes cmem[0]\n\
                   ptxas info    : Compiling entry function 'ab_fill' for 'sm_75'\n\
                   ptxas info    : Used 8 registers, 360 bytes cmem[0]\n";
        assert_eq!(
            parse_ptxas_log(log),
            vec![
                EntryInfo {
                    name: "ab_ofcolor".into(),
                    registers: 12,
                    shared_bytes: 352
                },
                EntryInfo {
                    name: "ab_fill".into(),
                    registers: 8,
                    shared_bytes: 0
                },
            ]
        );
    }
}
