//! `FileMap`: a workspace's files as `MemStore` holds them — relative path → bytes, sorted by
//! path. A sorted `Vec` rather than a `BTreeMap`: workspaces held in memory are small, and in
//! the wasm package a `BTreeMap<String, Vec<u8>>` costs about 10 KB of its own insert, remove,
//! rebalance and clone code (docs/benchmarks.md) where a vector reuses what is there anyway.

/// A workspace's files, by path relative to its root (`.agentx/…`), in path order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileMap(Vec<(String, Vec<u8>)>);

impl FileMap {
    pub fn new() -> FileMap {
        FileMap::default()
    }

    fn find(&self, path: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(p, _)| p.as_str().cmp(path))
    }

    /// The bytes of `path`.
    pub fn get(&self, path: &str) -> Option<&Vec<u8>> {
        self.find(path)
            .ok()
            .and_then(|i| self.0.get(i))
            .map(|(_, b)| b)
    }

    pub fn contains_key(&self, path: &str) -> bool {
        self.find(path).is_ok()
    }

    /// Writes `path`, replacing what was there.
    pub fn insert(&mut self, path: String, bytes: Vec<u8>) {
        match self.find(&path) {
            Ok(i) => {
                if let Some(slot) = self.0.get_mut(i) {
                    slot.1 = bytes;
                }
            }
            Err(i) => self.0.insert(i, (path, bytes)),
        }
    }

    /// Removes `path`, if it is there.
    pub fn remove(&mut self, path: &str) {
        if let Ok(i) = self.find(path) {
            self.0.remove(i);
        }
    }

    /// Every file, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Vec<u8>)> {
        self.0.iter().map(|(p, b)| (p, b))
    }

    /// Every path, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(p, _)| p)
    }

    /// The files whose path starts with `prefix`, in path order.
    pub fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a String, &'a Vec<u8>)> {
        let start = self.find(prefix).unwrap_or_else(|i| i);
        self.0
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(move |(p, _)| p.starts_with(prefix))
            .map(|(p, b)| (p, b))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, Vec<u8>)> for FileMap {
    /// Later entries for the same path replace earlier ones.
    fn from_iter<I: IntoIterator<Item = (String, Vec<u8>)>>(items: I) -> FileMap {
        let mut files = FileMap::new();
        for (path, bytes) in items {
            files.insert(path, bytes);
        }
        files
    }
}

impl IntoIterator for FileMap {
    type Item = (String, Vec<u8>);
    type IntoIter = std::vec::IntoIter<(String, Vec<u8>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a FileMap {
    type Item = (&'a String, &'a Vec<u8>);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Vec<u8>)>,
        fn(&'a (String, Vec<u8>)) -> (&'a String, &'a Vec<u8>),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(p, b)| (p, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> FileMap {
        paths
            .iter()
            .map(|p| ((*p).to_owned(), p.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn keeps_paths_sorted_and_unique() {
        let mut f = files(&["b", "a/2", "c", "a/1"]);
        f.insert("a/1".into(), b"new".to_vec());
        assert_eq!(f.keys().collect::<Vec<_>>(), ["a/1", "a/2", "b", "c"]);
        assert_eq!(f.get("a/1").map(Vec::as_slice), Some(&b"new"[..]));
        assert_eq!(f.len(), 4);
        f.remove("b");
        f.remove("missing");
        assert!(!f.contains_key("b") && f.contains_key("c"));
        assert_eq!(f.get("b"), None);
    }

    #[test]
    fn lists_a_prefix() {
        let f = files(&["x/b", "x", "x/a", "y/a", "w/a"]);
        let under: Vec<&String> = f.with_prefix("x/").map(|(p, _)| p).collect();
        assert_eq!(under, ["x/a", "x/b"]);
        assert_eq!(f.with_prefix("z/").count(), 0);
        assert!(FileMap::new().is_empty());
    }
}
