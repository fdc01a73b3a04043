//! The expression language's functions as data: each one's name, arity,
//! signature and what it returns, in docs order (docs/policy-language.md's
//! function table is generated from it). Part of the catalogue; must not
//! import anything of the crate.

/// One expression function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionSpec {
    /// The name (`min`).
    pub name: &'static str,
    /// Fewest arguments.
    pub min_args: usize,
    /// Most arguments (`usize::MAX`: any number).
    pub max_args: usize,
    /// How it is called (`min(a, b, ...)`).
    pub signature: &'static str,
    /// One line: what it returns.
    pub description: &'static str,
}

/// Every expression function, in docs order.
pub const FUNCTIONS: &[FunctionSpec] = &[
    FunctionSpec {
        name: "min",
        min_args: 1,
        max_args: usize::MAX,
        signature: "min(a, b, ...)",
        description: "the smallest argument, or the smallest item of one list",
    },
    FunctionSpec {
        name: "max",
        min_args: 1,
        max_args: usize::MAX,
        signature: "max(a, b, ...)",
        description: "the largest argument, or the largest item of one list",
    },
    FunctionSpec {
        name: "present",
        min_args: 1,
        max_args: 1,
        signature: "present(x)",
        description: "true when `x` has a value, false when it is absent (unknown stays unknown)",
    },
    FunctionSpec {
        name: "default",
        min_args: 2,
        max_args: 2,
        signature: "default(x, v)",
        description: "`x`, or `v` when `x` is absent",
    },
    FunctionSpec {
        name: "within",
        min_args: 3,
        max_args: 3,
        signature: "within(x, lo, hi)",
        description: "`x`; when `x` is unknown, a number known to lie between `lo` and `hi`: arithmetic carries the range and a comparison every value in it answers alike is decided",
    },
    FunctionSpec {
        name: "du",
        min_args: 1,
        max_args: 1,
        signature: "du(path)",
        description: "size of a directory in bytes (live walk, or `captures/du.txt`)",
    },
    FunctionSpec {
        name: "round",
        min_args: 1,
        max_args: 2,
        signature: "round(x[, places])",
        description: "`x` rounded to `places` decimals (0 by default); a size stays a size",
    },
    FunctionSpec {
        name: "floor",
        min_args: 1,
        max_args: 1,
        signature: "floor(x)",
        description: "`x` rounded down",
    },
    FunctionSpec {
        name: "ceil",
        min_args: 1,
        max_args: 1,
        signature: "ceil(x)",
        description: "`x` rounded up",
    },
    FunctionSpec {
        name: "contains",
        min_args: 2,
        max_args: 2,
        signature: "contains(list_or_string, x)",
        description: "true when a list has an item equal to `x`, or a string contains `x`",
    },
    FunctionSpec {
        name: "field",
        min_args: 2,
        max_args: 2,
        signature: "field(list, name)",
        description: "the `name` field of each item of a list of records, in order (`field(params.pins, \"key\")`); an item without it is left out",
    },
    FunctionSpec {
        name: "matches",
        min_args: 2,
        max_args: 2,
        signature: "matches(text, globs)",
        description: "true when `text` matches the glob or list of globs (`*`, `?`, `[abc]`, `[!abc]`); in a list, an entry `!GLOB` excludes again what it matches, and the last entry that matches decides, as in `.gitignore`",
    },
    FunctionSpec {
        name: "mount_of",
        min_args: 1,
        max_args: 1,
        signature: "mount_of(path)",
        description: "the mount point holding a path",
    },
    FunctionSpec {
        name: "pct",
        min_args: 1,
        max_args: 1,
        signature: "pct(x)",
        description: "a fraction as text with one decimal, `0.153` is `15.3 %`",
    },
    FunctionSpec {
        name: "mib",
        min_args: 1,
        max_args: 1,
        signature: "mib(x)",
        description: "bytes as whole MiB text, `512 MiB`",
    },
    FunctionSpec {
        name: "gib",
        min_args: 1,
        max_args: 1,
        signature: "gib(x)",
        description: "bytes as GiB text with one decimal, `2.4 GiB`",
    },
    FunctionSpec {
        name: "size",
        min_args: 1,
        max_args: 1,
        signature: "size(x)",
        description: "a number as a size in bytes (shown as `12 GiB`)",
    },
    FunctionSpec {
        name: "number",
        min_args: 1,
        max_args: 1,
        signature: "number(x)",
        description: "a size, boolean or numeric string as a plain number",
    },
    FunctionSpec {
        name: "abs",
        min_args: 1,
        max_args: 1,
        signature: "abs(x)",
        description: "the absolute value; a size stays a size",
    },
    FunctionSpec {
        name: "join",
        min_args: 1,
        max_args: 2,
        signature: "join(list[, sep])",
        description: "the items of a list as text, separated by `sep` (`,` by default)",
    },
    FunctionSpec {
        name: "len",
        min_args: 1,
        max_args: 1,
        signature: "len(x)",
        description: "the number of items of a list, or of characters of a value's text",
    },
    FunctionSpec {
        name: "version",
        min_args: 1,
        max_args: 1,
        signature: "version(text)",
        description: "the leading `major.minor.patch` of a version string as a number that compares correctly: `version(mysql.version) >= version(\"5.7.7\")`",
    },
];
