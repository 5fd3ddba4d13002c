//! NVRTC, NVIDIA's run-time compiler: CUDA C source to a CUBIN for one GPU architecture. It
//! runs without a GPU, so CI compiles every kernel for every target here (DESIGN.md §5).
//!
//! The library is opened at run time, never linked, and its entry points are read from that one
//! file: the file `ARCBATCH_NVRTC` names (for instance the `libnvrtc.so.12` of PyPI's
//! `nvidia-cuda-nvrtc-cu12`), else `libnvrtc.so.12` on the loader path, else in CUDA's usual
//! directories ([`library::DIRS`]). Never the unversioned `libnvrtc.so`: on a machine with CUDA
//! 13 installed that is NVRTC 13, which cudarc's lookup by name would take first. Only CUDA
//! 12.x: CUDA 13's NVRTC no longer targets sm_60 (P100).

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nvrtc::sys::{nvrtcProgram, nvrtcResult};

use super::library::{self, LoadError, NotFound};

/// The GPU architectures arcbatch is built for: P100 (sm_60), T4 (sm_75), L4 (sm_89).
pub const TARGETS: [u32; 3] = [60, 75, 89];

/// The environment variable naming the NVRTC library file to use.
pub const NVRTC_ENV: &str = "ARCBATCH_NVRTC";

/// A loaded NVRTC library.
#[derive(Debug)]
pub struct Nvrtc {
    /// Major and minor version, e.g. (12, 9).
    pub version: (i32, i32),
    /// Where it was found: a file, or [`library::LOADER_PATH`].
    pub origin: String,
    api: Api,
}

type Status = nvrtcResult;

/// The NVRTC entry points arcbatch calls, resolved from the one library file that was opened
/// (which stays loaded while this lives).
#[derive(Debug)]
struct Api {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status,
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
    create: unsafe extern "C" fn(
        *mut nvrtcProgram,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile: unsafe extern "C" fn(nvrtcProgram, c_int, *const *const c_char) -> Status,
    destroy: unsafe extern "C" fn(*mut nvrtcProgram) -> Status,
    log_size: unsafe extern "C" fn(nvrtcProgram, *mut usize) -> Status,
    log: unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> Status,
    cubin_size: unsafe extern "C" fn(nvrtcProgram, *mut usize) -> Status,
    cubin: unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> Status,
    _library: libloading::Library,
}

impl Api {
    /// Reads every entry point from `library`; the name of the first one missing otherwise.
    fn new(library: libloading::Library) -> Result<Api, &'static str> {
        /// SAFETY (of each use): the symbol is NVRTC's function of that name, whose C
        /// signature the field's type spells; the pointer is used only while `_library` lives.
        unsafe fn entry<T: Copy>(library: &libloading::Library, name: &'static str) -> Result<T, &'static str> {
            library.get::<T>(name.as_bytes()).map(|f| *f).map_err(|_| name)
        }
        // SAFETY: see `entry`.
        unsafe {
            Ok(Api {
                version: entry(&library, "nvrtcVersion")?,
                error_string: entry(&library, "nvrtcGetErrorString")?,
                create: entry(&library, "nvrtcCreateProgram")?,
                compile: entry(&library, "nvrtcCompileProgram")?,
                destroy: entry(&library, "nvrtcDestroyProgram")?,
                log_size: entry(&library, "nvrtcGetProgramLogSize")?,
                log: entry(&library, "nvrtcGetProgramLog")?,
                cubin_size: entry(&library, "nvrtcGetCUBINSize")?,
                cubin: entry(&library, "nvrtcGetCUBIN")?,
                _library: library,
            })
        }
    }
}

/// Why there is no NVRTC to use, or why it failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NvrtcError {
    /// The file [`NVRTC_ENV`] names does not load.
    #[error("cannot use {NVRTC_ENV}")]
    Env(#[source] LoadError),
    #[error("{}: not an NVRTC library (no {symbol})", path.display())]
    NotNvrtc { path: PathBuf, symbol: &'static str },
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
    load_from(std::env::var_os(NVRTC_ENV).filter(|path| !path.is_empty()))
}

/// Loads NVRTC from `file` (the value of [`NVRTC_ENV`]), else from where it is looked for.
fn load_from(file: Option<std::ffi::OsString>) -> Result<Nvrtc, NvrtcError> {
    const FILE: &str = "libnvrtc.so.12";
    let (library, origin) = match file {
        Some(path) => {
            let path = PathBuf::from(path);
            let library = open(&path).map_err(NvrtcError::Env)?;
            (library, path)
        }
        None => {
            let (library, origin) = library::search(FILE, || open(Path::new(FILE)).ok(), |path| open(path).ok())
                .map_err(NvrtcError::Missing)?;
            (library, PathBuf::from(origin))
        }
    };
    let api = Api::new(library).map_err(|symbol| NvrtcError::NotNvrtc {
        path: origin.clone(),
        symbol,
    })?;
    let origin = origin.display().to_string();
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC's own function; the out-pointers are valid.
    let status = unsafe { (api.version)(&mut major, &mut minor) };
    let nvrtc = Nvrtc {
        version: (major, minor),
        origin,
        api,
    };
    nvrtc.check(status, "nvrtcVersion")?;
    if major != 12 {
        return Err(NvrtcError::Version {
            major,
            minor,
            origin: nvrtc.origin,
        });
    }
    Ok(nvrtc)
}

/// Opens a library file (a bare file name: through the loader path).
fn open(path: &Path) -> Result<libloading::Library, LoadError> {
    // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
    unsafe { libloading::Library::new(path) }.map_err(|e| LoadError::new(path, e))
}

fn c_string(what: &str, text: &str) -> Result<CString, NvrtcError> {
    CString::new(text).map_err(|_| NvrtcError::Nul(what.to_string()))
}

/// An NVRTC program, destroyed when dropped.
struct Program<'a> {
    raw: nvrtcProgram,
    nvrtc: &'a Nvrtc,
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by nvrtcCreateProgram and is destroyed only here.
        unsafe { (self.nvrtc.api.destroy)(&mut self.raw) };
    }
}

type Size = unsafe extern "C" fn(nvrtcProgram, *mut usize) -> Status;
type CopyOut = unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> Status;

impl Program<'_> {
    /// Reads a variable-size output of the program through its size and copy functions.
    fn read(&self, what: &'static str, size: Size, copy: CopyOut) -> Result<Vec<u8>, NvrtcError> {
        let mut len = 0usize;
        // SAFETY: a live program and a valid out-pointer.
        self.nvrtc.check(unsafe { size(self.raw, &mut len) }, what)?;
        let mut out = vec![0u8; len];
        // SAFETY: `out` holds the `len` bytes NVRTC said it would write.
        self.nvrtc
            .check(unsafe { copy(self.raw, out.as_mut_ptr().cast()) }, what)?;
        Ok(out)
    }

    fn log(&self) -> String {
        let api = &self.nvrtc.api;
        let log = self
            .read("nvrtcGetProgramLog", api.log_size, api.log)
            .unwrap_or_default();
        String::from_utf8_lossy(&log).trim_end_matches('\0').trim().to_string()
    }
}

impl Nvrtc {
    /// NVRTC's text for a status that is not success; `None` for success.
    fn failure(&self, status: Status) -> Option<String> {
        if status == Status::NVRTC_SUCCESS {
            return None;
        }
        // SAFETY: NVRTC returns a static, NUL-terminated string for every status.
        let text = unsafe { CStr::from_ptr((self.api.error_string)(status)) };
        Some(text.to_string_lossy().into_owned())
    }

    /// An NVRTC status as a `Result`, naming the call that returned it.
    fn check(&self, status: Status, call: &'static str) -> Result<(), NvrtcError> {
        match self.failure(status) {
            None => Ok(()),
            Some(status) => Err(NvrtcError::Call { call, status }),
        }
    }

    /// Compiles `source` (named `name` in messages; it includes no header) for `sm_<arch>`.
    /// An error carries the compiler's log.
    pub fn compile(&self, name: &str, source: &str, arch: u32) -> Result<Cubin, NvrtcError> {
        let source_c = c_string(name, source)?;
        let name_c = c_string("the kernel name", name)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: both strings are NUL-terminated and outlive the program (this function's
        // locals); no headers are passed.
        self.check(
            unsafe {
                (self.api.create)(
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
        let program = Program { raw, nvrtc: self };
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
        let status = unsafe { (self.api.compile)(program.raw, option_ptrs.len() as c_int, option_ptrs.as_ptr()) };
        let log = program.log();
        if let Some(status) = self.failure(status) {
            return Err(NvrtcError::Compile {
                name: name.to_string(),
                arch,
                status,
                log,
            });
        }
        let image = program.read("nvrtcGetCUBIN", self.api.cubin_size, self.api.cubin)?;
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
    fn a_named_file_that_is_not_nvrtc_is_refused_by_name() {
        match load_from(Some("/nonexistent/libnvrtc.so.12".into())) {
            Err(NvrtcError::Env(e)) => assert_eq!(e.path, Path::new("/nonexistent/libnvrtc.so.12")),
            other => panic!("{other:?}"),
        }
        // A library that loads but is not NVRTC (the C maths library every Linux has).
        match load_from(Some("libm.so.6".into())) {
            Err(e @ NvrtcError::NotNvrtc { .. }) => {
                assert_eq!(e.to_string(), "libm.so.6: not an NVRTC library (no nvrtcVersion)")
            }
            other => panic!("{other:?}"),
        }
    }

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
