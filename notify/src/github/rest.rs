//! The few REST operations GitHub Mode uses (docs/github.md lists them), over either client.

use agentx_clarify_core::github::{marked, GithubConfig, LABEL};
use serde_json::{json, Value};

use super::client::{Client, GhError, Reply};

/// A comment as GitHub returns it (the fields used).
#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub url: String,
    pub body: String,
    pub login: String,
    pub created_at: String,
    pub updated_at: String,
}

impl Comment {
    /// Changed after it was posted: GitHub's `updated_at` is later than its `created_at`
    /// (both whole seconds in UTC, compared as text).
    pub fn edited(&self) -> bool {
        self.updated_at > self.created_at
    }
}

/// Where each record's comment id is remembered (the `github` state document), so that a
/// deliverer edits the comment it knows without searching, and of two deliverers that created
/// one at once, one keeps its comment and the other deletes its own.
pub trait CommentIds {
    fn known(&self, record: &str) -> Result<Option<u64>, GhError>;
    /// Makes `comment` the record's unless another is already: the one kept.
    fn adopt(&self, record: &str, comment: u64) -> Result<u64, GhError>;
    /// `comment` is no longer on GitHub.
    fn forget(&self, record: &str, comment: u64) -> Result<(), GhError>;
}

/// The repository's REST operations.
pub struct Repo<'a> {
    pub client: &'a Client,
    pub config: &'a GithubConfig,
    pub now: i64,
}

/// `%`-encodes a path segment (a label's name has a colon and a space).
fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn expect(reply: Reply, ok: &[u16]) -> Result<Reply, GhError> {
    if ok.contains(&reply.status) {
        return Ok(reply);
    }
    let message = serde_json::from_slice::<Value>(&reply.body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    let message: String = message.chars().take(200).collect();
    Err(GhError::Status {
        status: reply.status,
        message,
    })
}

/// The `rel="next"` URL of a `Link` header.
fn next_link(reply: &Reply) -> Option<String> {
    reply.header("link")?.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_owned()
            })
    })
}

impl Repo<'_> {
    fn base(&self) -> String {
        format!("/repos/{}/{}", self.config.owner, self.config.repo)
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Reply, GhError> {
        self.client.request(method, path, body, self.now)
    }

    /// Every comment of issue `issue` updated at or after `since` (all without it), oldest
    /// first, following GitHub's pages.
    pub fn comments(&self, issue: u32, since: Option<&str>) -> Result<Vec<Comment>, GhError> {
        let mut path = format!("{}/issues/{issue}/comments?per_page=100", self.base());
        if let Some(s) = since {
            path.push_str("&since=");
            path.push_str(&segment(s));
        }
        let mut out = Vec::new();
        let mut next = Some(path);
        let mut pages = 0;
        while let Some(path) = next.take() {
            pages += 1;
            if pages > 1000 {
                return Err(GhError::Failed("more than 1000 pages of comments".into()));
            }
            let reply = expect(self.call("GET", &path, None)?, &[200])?;
            let Value::Array(items) = reply.json()? else {
                return Err(GhError::Failed(
                    "GitHub's comment list is not a list".into(),
                ));
            };
            for item in items {
                let text = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                out.push(Comment {
                    id: item.get("id").and_then(Value::as_u64).unwrap_or(0),
                    url: text("html_url"),
                    body: text("body"),
                    login: item
                        .pointer("/user/login")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    created_at: text("created_at"),
                    updated_at: text("updated_at"),
                });
            }
            next = next_link(&reply);
        }
        Ok(out)
    }

    /// Creates or edits record `record`'s comment on issue `issue`, as posted by `me`: the
    /// comment `ids` knows, else the hub's own comment with the record's marker (a try that
    /// died after creating it), else a new one. Copies of the hub's comment beside the one
    /// kept (a race two deliverers ran before the record's comment was held, a deliverer that
    /// died after creating it) are deleted. Another account's comment with the marker is
    /// never taken: anyone may write one.
    pub fn put_comment(
        &self,
        issue: u32,
        record: &str,
        body: &str,
        me: &str,
        ids: &dyn CommentIds,
    ) -> Result<&'static str, GhError> {
        if let Some(known) = ids.known(record)? {
            if self.edit(known, body)? {
                return Ok("edited");
            }
            ids.forget(record, known)?;
        }
        let mut ours: Vec<Comment> = self
            .comments(issue, None)?
            .into_iter()
            .filter(|c| marked(&c.body) == Some(record) && c.login.eq_ignore_ascii_case(me))
            .collect();
        ours.sort_by_key(|c| c.id);
        let mut extra: Vec<u64> = Vec::new();
        let (kept, done) = match ours.first() {
            Some(first) => {
                let kept = ids.adopt(record, first.id)?;
                let same = ours.iter().any(|c| c.id == kept && c.body == body);
                (kept, if same { "unchanged" } else { "edited" })
            }
            None => {
                let created = self.create(issue, body)?;
                let kept = ids.adopt(record, created)?;
                if kept == created {
                    return Ok("created");
                }
                // Another deliverer's comment was remembered first: ours goes.
                extra.push(created);
                (kept, "edited")
            }
        };
        extra.extend(ours.iter().map(|c| c.id).filter(|id| *id != kept));
        for id in extra {
            self.delete(id)?;
        }
        if done == "edited" && !self.edit(kept, body)? {
            ids.forget(record, kept)?;
            return Err(GhError::Failed(format!(
                "the comment of {record} was deleted meanwhile; it is sent again"
            )));
        }
        Ok(done)
    }

    /// Edits comment `id`; false when it is not there (deleted: 404, or GitHub's documented
    /// 422 for an edit it cannot make).
    fn edit(&self, id: u64, body: &str) -> Result<bool, GhError> {
        let path = format!("{}/issues/comments/{id}", self.base());
        let reply = self.call("PATCH", &path, Some(&json!({"body": body})))?;
        if matches!(reply.status, 404 | 422) {
            return Ok(false);
        }
        expect(reply, &[200])?;
        Ok(true)
    }

    /// Posts a new comment on issue `issue`; its id.
    pub fn create(&self, issue: u32, body: &str) -> Result<u64, GhError> {
        let path = format!("{}/issues/{issue}/comments", self.base());
        let reply = expect(
            self.call("POST", &path, Some(&json!({"body": body})))?,
            &[201],
        )?;
        reply
            .json()?
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| GhError::Failed("GitHub's new comment has no id".into()))
    }

    /// Deletes comment `id` (404: gone already, as wanted).
    fn delete(&self, id: u64) -> Result<(), GhError> {
        let path = format!("{}/issues/comments/{id}", self.base());
        expect(self.call("DELETE", &path, None)?, &[204, 404])?;
        Ok(())
    }

    /// Puts [`LABEL`] on issue `issue`, or takes it off, when it is not so already.
    pub fn set_label(&self, issue: u32, on: bool) -> Result<(), GhError> {
        let path = format!("{}/issues/{issue}/labels", self.base());
        let reply = expect(
            self.call("GET", &format!("{path}?per_page=100"), None)?,
            &[200],
        )?;
        let has = reply.json()?.as_array().is_some_and(|ls| {
            ls.iter()
                .any(|l| l.get("name").and_then(Value::as_str) == Some(LABEL))
        });
        match (on, has) {
            (true, false) => {
                expect(
                    self.call("POST", &path, Some(&json!({"labels": [LABEL]})))?,
                    &[200],
                )?;
            }
            (false, true) => {
                let one = format!("{path}/{}", segment(LABEL));
                // 404: removed meanwhile by someone else, as wanted.
                expect(self.call("DELETE", &one, None)?, &[200, 404])?;
            }
            _ => {}
        }
        Ok(())
    }

    /// `login`'s permission on the repository: (`role_name`, `permission`).
    pub fn permission(&self, login: &str) -> Result<(Option<String>, Option<String>), GhError> {
        let path = format!(
            "{}/collaborators/{}/permission",
            self.base(),
            segment(login)
        );
        let reply = self.call("GET", &path, None)?;
        if reply.status == 404 {
            // Not a collaborator: no permission at all.
            return Ok((None, None));
        }
        let v = expect(reply, &[200])?.json()?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok((text("role_name"), text("permission")))
    }

    /// Adds a reaction (`+1`, `confused`) to a comment.
    pub fn react(&self, comment: u64, content: &str) -> Result<(), GhError> {
        let path = format!("{}/issues/comments/{comment}/reactions", self.base());
        expect(
            self.call("POST", &path, Some(&json!({"content": content})))?,
            &[200, 201],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_segments() {
        let r = Reply {
            status: 200,
            headers: vec![(
                "link".into(),
                "<http://x/repos/a/b/issues/1/comments?page=2>; rel=\"next\", <http://x/r?page=9>; rel=\"last\"".into(),
            )],
            body: Vec::new(),
        };
        assert_eq!(
            next_link(&r).as_deref(),
            Some("http://x/repos/a/b/issues/1/comments?page=2")
        );
        assert_eq!(segment("agentx: blocked"), "agentx%3A%20blocked");
    }
}
