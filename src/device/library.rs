//! Finding the CUDA libraries at run time: on the loader path, then in the directories where
//! Kaggle's image and CUDA installs keep them ([`DIRS`]), by full path ([`search`]). NVRTC is
//! opened from the one file found ([`super::nvrtc`]). cudarc opens the driver (`libcuda`) by
//! name itself, so a driver file found in [`DIRS`] is opened with `RTLD_GLOBAL` and kept loaded
//! ([`locate`]), and cudarc's lookup by name then finds the copy already loaded (the loader
//! matches a loaded library by its soname).

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Directories tried after the loader path: Kaggle's driver directory, then CUDA's.
pub const DIRS: [&str; 2] = ["/usr/local/nvidia/lib64", "/usr/local/cuda/lib64"];

/// Where a library was found, for `gpu-info`.
pub const LOADER_PATH: &str = "the loader path";

/// A library file that does not load (the loader's error is shared, so that a cached error
/// can be cloned).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{}: cannot load it", path.display())]
pub struct LoadError {
    pub path: PathBuf,
    #[source]
    source: Arc<libloading::Error>,
}

/// No copy of a library was found: every place tried.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no {file} on {}", tried.join(" or "))]
pub struct NotFound {
    pub file: String,
    pub tried: Vec<String>,
}

impl LoadError {
    pub fn new(path: &Path, source: libloading::Error) -> LoadError {
        LoadError {
            path: path.into(),
            source: Arc::new(source),
        }
    }
}

/// Opens `path` with `RTLD_GLOBAL` for the rest of the process.
pub fn preload(path: &Path) -> Result<(), LoadError> {
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL;
    // SAFETY: loading a CUDA library runs its initialisers, which have no preconditions; the
    // library is never unloaded (leaked on purpose: cudarc's lookups use it for the life of
    // the process).
    let library =
        unsafe { libloading::os::unix::Library::open(Some(path), flags) }.map_err(|e| LoadError::new(path, e))?;
    std::mem::forget(library);
    Ok(())
}

/// Finds a library that `present` (cudarc's lookup by name) reports: on the loader path, else
/// as `file` in one of [`DIRS`], preloaded. Returns where it was found, or every place tried.
pub fn locate(file: &str, present: impl Fn() -> bool) -> Result<String, NotFound> {
    search(
        file,
        || present().then_some(()),
        |path| (path.exists() && preload(path).is_ok() && present()).then_some(()),
    )
    .map(|((), origin)| origin)
}

/// Looks for a library on the loader path (`on_path`), then as `file` in each of [`DIRS`]
/// (`at`): what the first place that has it gives, and where that is ([`LOADER_PATH`] or the
/// file), or every place tried.
pub fn search<T>(
    file: &str,
    on_path: impl FnOnce() -> Option<T>,
    mut at: impl FnMut(&Path) -> Option<T>,
) -> Result<(T, String), NotFound> {
    if let Some(found) = on_path() {
        return Ok((found, LOADER_PATH.to_string()));
    }
    let mut tried = vec![LOADER_PATH.to_string()];
    for dir in DIRS {
        let path = Path::new(dir).join(file);
        if let Some(found) = at(&path) {
            return Ok((found, path.display().to_string()));
        }
        tried.push(path.display().to_string());
    }
    Err(NotFound {
        file: file.to_string(),
        tried,
    })
}
