//! The shape of the code, read from its sources with `syn`: short functions, no
//! import circle between sibling files, a thin command crate, and an engine whose
//! components own their state.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The workspace's root (this crate is `crates/gentle`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace")
}

/// Every Rust file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("entry").path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The crates' source and test files.
fn workspace_files() -> Vec<PathBuf> {
    let crates = root().join("crates");
    let mut files = Vec::new();
    for c in std::fs::read_dir(&crates).expect("crates/") {
        let c = c.expect("entry").path();
        for sub in ["src", "tests", "benches"] {
            if c.join(sub).is_dir() {
                files.extend(rust_files(&c.join(sub)));
            }
        }
    }
    files.sort();
    assert!(files.len() > 100, "found only {} files", files.len());
    files
}

fn parse(p: &Path) -> syn::File {
    let text = std::fs::read_to_string(p).expect("readable");
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The longest a function may be, in lines from its signature to its closing brace.
const LONGEST_FUNCTION: usize = 120;

struct Functions<'a> {
    file: &'a Path,
    long: Vec<String>,
}

impl Functions<'_> {
    fn check(&mut self, name: &syn::Ident, start: proc_macro2::Span, end: proc_macro2::Span) {
        let lines = end.end().line - start.start().line + 1;
        if lines > LONGEST_FUNCTION {
            self.long.push(format!(
                "{}:{} {name}: {lines} lines",
                self.file.display(),
                start.start().line
            ));
        }
    }
}

impl<'ast> Visit<'ast> for Functions<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let start = f.sig.fn_token.span;
        self.check(&f.sig.ident, start, f.block.brace_token.span.close());
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let start = f.sig.fn_token.span;
        self.check(&f.sig.ident, start, f.block.brace_token.span.close());
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(b) = &f.default {
            self.check(
                &f.sig.ident,
                f.sig.fn_token.span,
                b.brace_token.span.close(),
            );
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

#[test]
fn no_function_is_over_120_lines() {
    let mut long = Vec::new();
    for file in workspace_files() {
        let mut v = Functions {
            file: &file,
            long: Vec::new(),
        };
        v.visit_file(&parse(&file));
        long.extend(v.long);
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION} lines:\n{}",
        long.join("\n")
    );
}

/// A source file's module path inside its crate: `src/a/b.rs` and `src/a/b/mod.rs`
/// are `["a", "b"]`; `lib.rs` and `main.rs` are the crate root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file");
    if !matches!(last.as_str(), "mod.rs" | "lib.rs" | "main.rs") {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

/// Paths a file names through `crate::`, `super::` or `self::`, by their segments.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, t: &syn::UseTree) {
        match t {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.push(prefix, &n.ident),
            syn::UseTree::Rename(r) => self.push(prefix, &r.ident),
            syn::UseTree::Glob(_) => self.0.push(prefix.clone()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|i| self.use_tree(prefix, i)),
        }
    }

    fn push(&mut self, prefix: &[String], last: &syn::Ident) {
        let mut p = prefix.to_vec();
        p.push(last.to_string());
        self.0.push(p);
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.0
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }
}

/// The module a path leads into, from module `at`, if it is one of `modules`.
fn target(at: &[String], path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let (mut cur, rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (at.to_vec(), &path[1..]),
        Some("super") => {
            let mut cur = at.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                cur.pop();
                rest = &rest[1..];
            }
            (cur, rest)
        }
        _ => return None,
    };
    for seg in rest {
        let mut next = cur.clone();
        next.push(seg.clone());
        if !modules.contains(&next) {
            break;
        }
        cur = next;
    }
    Some(cur)
}

#[test]
fn no_two_sibling_files_import_from_each_other() {
    let mut circles = Vec::new();
    for c in std::fs::read_dir(root().join("crates")).expect("crates/") {
        let src = c.expect("entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        let files: Vec<(Vec<String>, PathBuf)> = rust_files(&src)
            .into_iter()
            .map(|f| (module_of(&src, &f), f))
            .collect();
        let modules: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
        let mut uses: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (m, f) in &files {
            let mut paths = Paths::default();
            paths.visit_file(&parse(f));
            let targets = paths.0.iter().filter_map(|p| target(m, p, &modules));
            uses.entry(m.clone()).or_default().extend(targets);
        }
        for (a, to) in &uses {
            for b in to {
                let siblings =
                    a.len() == b.len() && !a.is_empty() && a[..a.len() - 1] == b[..b.len() - 1];
                if siblings && a < b && uses.get(b).is_some_and(|t| t.contains(a)) {
                    circles.push(format!(
                        "{}: {} <-> {}",
                        src.display(),
                        a.join("::"),
                        b.join("::")
                    ));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "sibling files importing from each other:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_command_crate_only_parses_arguments() {
    let src = root().join("crates/gentle/src");
    let lines: usize = rust_files(&src)
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .expect("readable")
                .lines()
                .count()
        })
        .sum();
    assert!(lines < 2_000, "crates/gentle/src has {lines} lines");
    // The work is the library's: the command crate runs no simulation of its own.
    let main = std::fs::read_to_string(src.join("main.rs")).expect("main.rs");
    for word in ["runner::", "Staged", "rayon", "serde_json::to_string"] {
        assert!(!main.contains(word), "main.rs does work itself: `{word}`");
    }
}

/// The fields of `name`'s struct in `file`, and whether every one is private.
fn fields(file: &Path, name: &str) -> (usize, bool) {
    let f = parse(file);
    let s = f
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Struct(s) if s.ident == name => Some(s),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no struct {name} in {}", file.display()));
    let private = s
        .fields
        .iter()
        .all(|f| matches!(f.vis, syn::Visibility::Inherited));
    (s.fields.len(), private)
}

#[test]
fn the_engine_components_own_their_state() {
    let conn = root().join("crates/tcp/src/connection");
    let (n, _) = fields(&conn.join("mod.rs"), "Connection");
    assert!(n <= 12, "Connection has {n} fields");
    for (file, name) in [
        ("sender/mod.rs", "Sender"),
        ("receiver/mod.rs", "Receiver"),
        ("extensions/mod.rs", "Extensions"),
        ("extensions/corrective.rs", "Corrective"),
        ("extensions/proactive.rs", "Proactive"),
        ("extensions/ecn.rs", "Ecn"),
    ] {
        let (n, private) = fields(&conn.join(file), name);
        assert!(n > 0, "{name} has no fields");
        assert!(
            private,
            "a field of {name} ({file}) is visible outside its module"
        );
    }
}
