//! Small SVG helpers the tools share: text escaping, and drawing a value as a picture (a grid
//! as coloured cells, a patch on its bounding box, anything else as text).

use std::fmt::Write;

use crate::dsl::{Cell, Loc, Value};

/// Escapes text for SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// ARC's ten display colours (0 black .. 9 maroon); other colours are drawn grey.
const PALETTE: [&str; 10] = [
    "#000000", "#0074d9", "#ff4136", "#2ecc40", "#ffdc00", "#aaaaaa", "#f012be", "#ff851b", "#7fdbff", "#870c25",
];

fn fill_of(color: i32) -> &'static str {
    usize::try_from(color)
        .ok()
        .and_then(|c| PALETTE.get(c))
        .copied()
        .unwrap_or("#777777")
}

/// Side of one drawn cell, in pixels.
pub const CELL: usize = 14;

/// One cell of a [`Picture`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Not part of the value (a patch's bounding box beyond its cells).
    Absent,
    /// A member of an index set (drawn white).
    Member,
    /// A coloured cell of a grid or an object.
    Color(i32),
}

/// A value laid out as cells, row-major, relative to its top-left corner.
pub struct Picture {
    pub h: usize,
    pub w: usize,
    marks: Vec<Mark>,
}

impl Picture {
    /// The picture of a grid, an object or an index set (`None` for other values, and for
    /// patches wider than 100 cells, which would not make a readable drawing).
    pub fn of(v: &Value) -> Option<Picture> {
        if let Ok(g) = v.as_grid() {
            let marks = g.cells.iter().map(|&c| Mark::Color(c)).collect();
            return Some(Picture { h: g.h, w: g.w, marks });
        }
        match v {
            Value::Object(cells) => Picture::patch(cells.iter().map(|c: &Cell| (c.loc(), Mark::Color(c.color)))),
            Value::Indices(locs) => Picture::patch(locs.iter().map(|&l: &Loc| (l, Mark::Member))),
            _ => None,
        }
    }

    fn patch(items: impl Iterator<Item = (Loc, Mark)> + Clone) -> Option<Picture> {
        let (i0, j0) = items
            .clone()
            .fold((i32::MAX, i32::MAX), |(a, b), (l, _)| (a.min(l.i), b.min(l.j)));
        let (i1, j1) = items
            .clone()
            .fold((i32::MIN, i32::MIN), |(a, b), (l, _)| (a.max(l.i), b.max(l.j)));
        if i0 > i1 || i64::from(i1) - i64::from(i0) >= 100 || i64::from(j1) - i64::from(j0) >= 100 {
            return None;
        }
        let (h, w) = ((i1 - i0 + 1) as usize, (j1 - j0 + 1) as usize);
        let mut marks = vec![Mark::Absent; h * w];
        for (l, mark) in items {
            marks[(l.i - i0) as usize * w + (l.j - j0) as usize] = mark;
        }
        Some(Picture { h, w, marks })
    }

    /// The cell at `(i, j)`, [`Mark::Absent`] outside the picture.
    fn at(&self, i: usize, j: usize) -> Mark {
        if i < self.h && j < self.w {
            self.marks[i * self.w + j]
        } else {
            Mark::Absent
        }
    }
}

/// Appends a picture at `(x, y)`; cells where it differs from `other` get a red outline.
pub fn draw(svg: &mut String, p: &Picture, x: usize, y: usize, other: Option<&Picture>) {
    let _ = writeln!(
        svg,
        "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\" stroke=\"#999\"/>",
        p.w * CELL,
        p.h * CELL
    );
    for i in 0..p.h {
        for j in 0..p.w {
            let (cx, cy) = (x + j * CELL, y + i * CELL);
            let fill = match p.at(i, j) {
                Mark::Absent => None,
                Mark::Member => Some("#ffffff"),
                Mark::Color(c) => Some(fill_of(c)),
            };
            if let Some(fill) = fill {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{cx}\" y=\"{cy}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\" stroke=\"#555\" stroke-width=\"0.5\"/>"
                );
            }
            if other.is_some_and(|o| o.at(i, j) != p.at(i, j)) {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{cx}\" y=\"{cy}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"none\" stroke=\"#ff0000\" stroke-width=\"2\"/>"
                );
            }
        }
    }
}

/// Appends lines of text at `(x, y)`, each cut to `width` characters.
pub fn text(svg: &mut String, lines: &[String], x: usize, y: usize, width: usize) {
    for (k, line) in lines.iter().enumerate() {
        let shown: String = line.chars().take(width).collect();
        let _ = writeln!(svg, "<text x=\"{x}\" y=\"{}\">{}</text>", y + 16 * k, escape(&shown));
    }
}
