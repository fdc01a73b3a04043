//! Build script: checks the compiled-in MariaDB 10.11 option table
//! (src/facts/mysql/mariadb-10.11.tsv, written by scripts/mysql-limits) and
//! writes it to OUT_DIR as a sorted static Rust table, so no audit parses it at
//! run time. Reads only that file and writes only OUT_DIR; a malformed line
//! fails the build with its file, line and column.

#[path = "src/facts/mysql/table_gen.rs"]
mod table_gen;

fn main() {
    const TSV: &str = "src/facts/mysql/mariadb-10.11.tsv";
    println!("cargo:rerun-if-changed={TSV}");
    println!("cargo:rerun-if-changed=src/facts/mysql/table_gen.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{dir}/{TSV}")).unwrap_or_else(|e| {
        eprintln!("error: cannot read the MariaDB option table {TSV}: {e}");
        std::process::exit(1);
    });
    let table = table_gen::parse(TSV, &text).unwrap_or_else(|e| {
        eprintln!("error: the MariaDB option table is malformed:\n{e}");
        std::process::exit(1);
    });
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let path = format!("{out}/mariadb_10_11.rs");
    if let Err(e) = std::fs::write(&path, table_gen::render("MariaDB 10.11", TSV, &table)) {
        eprintln!("error: cannot write {path}: {e}");
        std::process::exit(1);
    }
}
