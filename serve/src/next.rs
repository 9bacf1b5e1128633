//! Where a sign-in goes afterwards (docs/protocol.md §23 "Deep links"): a page of this server,
//! never anywhere else. A link from a notification opened signed-out leads to `/login?next=…`
//! and, once signed in, back to that page; a `next` that is not one of this server's own paths
//! (`//evil.example`, `https://…`, `/\evil`, a control character) is dropped for `/`, so the
//! sign-in page is no open redirect. A leaf: it reads no state.

/// Longest `next` kept (a thread's path is ~30 characters).
const MAX: usize = 512;

/// The name of the cookie that keeps `next` while a person fetches a sign-in link (the link
/// from `agentx tokens link` carries no `next` of its own).
pub fn cookie_name(https: bool) -> &'static str {
    if https {
        "__Host-agentx-next"
    } else {
        "agentx-next"
    }
}

/// `text` when it is a path of this server's pages to return to, else `None`.
pub fn safe(text: &str) -> Option<&str> {
    let mut chars = text.chars();
    let first = chars.next()?;
    let second = chars.next();
    let own_path = first == '/' && !matches!(second, Some('/' | '\\'));
    let plain = text.len() <= MAX && text.bytes().all(|b| b.is_ascii_graphic() && b != b'\\');
    // Signing in again after signing in would be a loop.
    let page = !["/login", "/logout"]
        .iter()
        .any(|p| text == *p || text.starts_with(&format!("{p}?")));
    (own_path && plain && page).then_some(text)
}

/// `/login`, with `next` when the page asked for is worth coming back to, and why the person
/// must sign in (`expired`, `unknown`: a cookie was presented that is no session now).
pub fn login_location(path_and_query: &str, why: Option<&str>) -> String {
    let mut query = Vec::new();
    if let Some(next) = safe(path_and_query).filter(|p| *p != "/") {
        query.push(format!("next={}", crate::html::query_value(next)));
    }
    if let Some(why) = why {
        query.push(format!("why={why}"));
    }
    if query.is_empty() {
        "/login".to_owned()
    } else {
        format!("/login?{}", query.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_servers_own_pages_are_kept() {
        for ok in [
            "/",
            "/clarifications/CLR-42-001",
            "/?status=all&q=cache",
            "/audit?issue=7",
        ] {
            assert_eq!(safe(ok), Some(ok), "{ok}");
        }
        for bad in [
            "",
            "//evil.example/x",
            "/\\evil.example",
            "https://evil.example/",
            "javascript:alert(1)",
            "evil.example",
            "/a b",
            "/a\r\nSet-Cookie: x=1",
            "/login",
            "/login?next=/",
            "/logout",
            "/caf\u{e9}",
        ] {
            assert_eq!(safe(bad), None, "{bad:?}");
        }
        assert_eq!(safe(&format!("/{}", "a".repeat(MAX))), None);
    }

    #[test]
    fn the_sign_in_page_is_told_where_to_return() {
        assert_eq!(
            login_location("/clarifications/CLR-42-001", None),
            "/login?next=%2Fclarifications%2FCLR-42-001"
        );
        assert_eq!(login_location("/", Some("expired")), "/login?why=expired");
        assert_eq!(login_location("//evil.example", None), "/login");
    }
}
