//! The settings' stamp: what a long-lived process (`agentx serve`, an MCP server, the Node
//! binding) looks at to know whether the workspace's settings changed since it read them,
//! without reading them — `config.toml`, `people.toml`, the workflow and manifest directories and each file
//! in them, by their metadata (`lstat`: a link is stamped as the link, never followed).
//!
//! A directory's own stamp moves when a file is added, removed or renamed into it (an editor's
//! atomic save); a file's moves when it is written in place. Both are looked at, so either
//! way of saving shows. The files are the ones the last look listed: a new one shows through
//! its directory's stamp, and the next look lists again.
//!
//! The kernel stamps files from a coarse clock (a tick of a few milliseconds), so a save in
//! the same tick as the reading can leave every stamp as it was (git's "racily clean" index).
//! A stamp that holds a time less than [`SETTLED`] old is therefore never trusted: the next
//! look reads the settings again, until they have been still for that long.

use std::path::Path;
use std::time::{Duration, SystemTime};

use agentx_clarify_command::paths::{AGENTS_DIR, CONFIG, PEOPLE, WORKFLOWS_DIR};

use crate::DiskStore;

/// One file's or directory's metadata as compared: modified and changed times, size, inode.
type Meta = Option<(SystemTime, (i64, i64), u64, u64)>;

fn meta(path: &Path) -> Meta {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((
        m.modified().ok()?,
        (m.ctime(), m.ctime_nsec()),
        m.len(),
        m.ino(),
    ))
}

/// How long a stamp's times must lie in the past for the stamp to be trusted (as the change
/// feed's, `feed.rs`: a second, beyond any tick and most network filesystems' skew).
pub const SETTLED: Duration = Duration::from_secs(1);

/// How the settings files looked at one moment. Equal stamps: nothing was saved in between.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettingsStamp {
    config: Meta,
    /// `people.toml` (docs/protocol.md §37): who decides changes with it.
    people: Meta,
    /// Each settings directory's own stamp, then its files' (name and stamp), by name.
    dirs: Vec<(Meta, Vec<(String, Meta)>)>,
    /// A time in it was too recent to tell a later save in the same tick apart.
    racy: bool,
}

const DIRS: [&str; 2] = [WORKFLOWS_DIR, AGENTS_DIR];

impl DiskStore {
    /// The settings as they look now, their files listed.
    pub fn settings_stamp(&self) -> SettingsStamp {
        let config = meta(&self.path(CONFIG));
        let people = meta(&self.path(PEOPLE));
        let dirs: Vec<(Meta, Vec<(String, Meta)>)> = DIRS
            .iter()
            .map(|dir| {
                let path = self.path(dir);
                (meta(&path), listed(&path))
            })
            .collect();
        let since = SystemTime::now().checked_sub(SETTLED);
        let recent = |m: &Meta| {
            m.as_ref()
                .is_some_and(|(modified, ..)| since.is_none_or(|t| *modified >= t))
        };
        let racy = recent(&config)
            || recent(&people)
            || dirs
                .iter()
                .any(|(own, files)| recent(own) || files.iter().any(|(_, m)| recent(m)));
        SettingsStamp {
            config,
            people,
            dirs,
            racy,
        }
    }

    /// Whether the settings still look as `stamp` says: the same `lstat`s again, no listing
    /// (a file added or removed shows in its directory's stamp).
    pub fn settings_unchanged(&self, stamp: &SettingsStamp) -> bool {
        if stamp.racy
            || meta(&self.path(CONFIG)) != stamp.config
            || meta(&self.path(PEOPLE)) != stamp.people
        {
            return false;
        }
        DIRS.iter().zip(&stamp.dirs).all(|(dir, (own, files))| {
            let path = self.path(dir);
            meta(&path) == *own && files.iter().all(|(name, m)| meta(&path.join(name)) == *m)
        })
    }
}

/// The `.toml` files of a settings directory and their stamps, by name.
fn listed(dir: &Path) -> Vec<(String, Meta)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Meta)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stamp = name.ends_with(".toml").then(|| meta(&e.path()))?;
            Some((name, stamp))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settles the stamps: sets every settings file's times a minute back, as if saved then.
    fn settle(root: &Path) {
        let old = SystemTime::now() - Duration::from_secs(60);
        let mut paths = vec![root.join(CONFIG)];
        for dir in DIRS {
            let dir = root.join(dir);
            paths.extend(listed(&dir).into_iter().map(|(n, _)| dir.join(n)));
            paths.push(dir);
        }
        for p in paths.into_iter().filter(|p| p.exists()) {
            let f = std::fs::File::open(&p).unwrap();
            f.set_times(std::fs::FileTimes::new().set_modified(old))
                .unwrap();
        }
    }

    #[test]
    fn an_edit_in_place_a_new_file_and_an_atomic_save_all_show() {
        let dir = tempfile::tempdir().unwrap();
        let store = DiskStore::new(dir.path());
        let empty = store.settings_stamp();
        assert!(store.settings_unchanged(&empty));
        std::fs::create_dir_all(dir.path().join(WORKFLOWS_DIR)).unwrap();
        assert!(!store.settings_unchanged(&empty));
        let config = dir.path().join(CONFIG);
        std::fs::write(&config, "[clarify]\n").unwrap();
        // Just saved: not trusted, read again.
        assert!(!store.settings_unchanged(&store.settings_stamp()));
        settle(dir.path());
        let written = store.settings_stamp();
        assert!(store.settings_unchanged(&written));
        // In place: the same inode, another size.
        std::fs::write(&config, "[clarify]\nmax_retries = 2\n").unwrap();
        assert!(!store.settings_unchanged(&written));
        let flow = dir.path().join(WORKFLOWS_DIR).join("feature.toml");
        std::fs::write(&flow, "").unwrap();
        settle(dir.path());
        let with_flow = store.settings_stamp();
        assert!(store.settings_unchanged(&with_flow));
        std::fs::write(dir.path().join("new.toml"), "[[steps]]\n").unwrap();
        std::fs::rename(dir.path().join("new.toml"), &flow).unwrap();
        assert!(!store.settings_unchanged(&with_flow));
        settle(dir.path());
        assert!(store.settings_unchanged(&store.settings_stamp()));
    }
}
