//! The README's "Built-in commands:" list is the code's list of commands
//! (`commands::supported()`, which the unknown-command error prints too).

#[test]
fn readme_lists_every_supported_command() {
    let path = format!("{}/../../README.md", env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let start = readme.find("Built-in commands: `").expect("a 'Built-in commands: `...`' list in the README") + "Built-in commands: `".len();
    let end = start + readme[start..].find('`').expect("closing backquote");
    let listed: Vec<&str> = readme[start..end].split_whitespace().collect();
    let want = memtwin_scenario::commands::supported();
    assert_eq!(listed, want, "the README's list should read:\nBuilt-in commands: `{}`", want.join(" "));
}
