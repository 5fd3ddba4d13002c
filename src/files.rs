//! Writing result files (reports, submissions) so that a reader, or a run killed midway, never
//! sees half a file: each is written beside its path and renamed over it once complete.

use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::Value as Json;

/// Writes `path` atomically: `write` fills a temporary file beside it (`<path>.partial`,
/// buffered), which is then renamed over `path`.
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
    write(&mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// [`write_atomically`] of one JSON value (compact, or indented with `pretty`) and a newline.
pub fn write_json(path: &Path, value: &Json, pretty: bool) -> std::io::Result<()> {
    write_atomically(path, |out| {
        match pretty {
            true => serde_json::to_writer_pretty(&mut *out, value)?,
            false => serde_json::to_writer(&mut *out, value)?,
        }
        out.write_all(b"\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_file_before_it() {
        let dir = std::env::temp_dir().join(format!("arcbatch-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("report.json");
        write_json(&path, &serde_json::json!({"a": 1}), false).unwrap();
        let failed = write_atomically(&path, |out| {
            out.write_all(b"{\"half")?;
            Err(std::io::Error::other("killed"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":1}\n");
        write_json(&path, &serde_json::json!([1, 2]), true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[\n  1,\n  2\n]\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
