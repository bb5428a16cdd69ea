//! Build script: names the commit and the build profile the binary was
//! built from, for `neardup --version` and the sidecar's startup line.
//!
//! Motivation: an image or a package in production says which source it
//! runs only if the binary carries it; the crate version alone does not
//! change between commits.
//!
//! Design: `git rev-parse` at build time, rerun when HEAD or the branch it
//! names moves. Without git or without `.git` (a source tarball) the commit
//! is `$NEARDUP_COMMIT` if set, else `unknown`; the build never fails on it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=NEARDUP_COMMIT");
    let commit = git(&["rev-parse", "--short=12", "HEAD"])
        .or_else(|| std::env::var("NEARDUP_COMMIT").ok())
        .unwrap_or_else(|| "unknown".to_string());
    // HEAD moves on checkout; the branch's ref on commit: its loose file
    // when there is one, else (a clone's refs are packed) `packed-refs`
    // and the `refs/heads` directory, where a commit writes the loose
    // file. Only paths that exist: cargo reruns the script at every build
    // for a path that does not, and every test target would recompile the
    // package. Not `refs/heads` when the loose file exists: a commit on
    // any other branch (another worktree) would recompile this one.
    let mut watched: Vec<String> = ["HEAD", "packed-refs"]
        .iter()
        .filter_map(|path| git(&["rev-parse", "--git-path", path]))
        .collect();
    let branch_file = git(&["symbolic-ref", "-q", "HEAD"])
        .and_then(|branch| git(&["rev-parse", "--git-path", &branch]))
        .filter(|file| std::path::Path::new(file).exists());
    match branch_file {
        Some(file) => watched.push(file),
        None => watched.extend(git(&["rev-parse", "--git-path", "refs/heads"])),
    }
    for file in watched
        .iter()
        .filter(|file| std::path::Path::new(file).exists())
    {
        println!("cargo:rerun-if-changed={file}");
    }
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=NEARDUP_COMMIT={commit}");
    println!("cargo:rustc-env=NEARDUP_PROFILE={profile}");
}
