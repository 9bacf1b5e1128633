//! HTML building: every text that reaches a page goes through [`esc`]; the pages carry no
//! inline script or style (the CSP forbids both), only `/assets/app.css` and `/assets/app.js`.

/// Escapes text for an HTML element or a quoted attribute.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn head(title: &str, csrf: Option<&str>) -> String {
    let csrf = csrf
        .map(|t| format!("<meta name=\"csrf\" content=\"{}\">", esc(t)))
        .unwrap_or_default();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · AgentX inbox</title><link rel=\"icon\" href=\"data:,\">\
         <link rel=\"stylesheet\" href=\"/assets/app.css\">{csrf}\
         <script type=\"module\" src=\"/assets/app.js\"></script></head>",
        esc(title)
    )
}

/// A page without navigation (sign-in, errors before a session).
pub fn bare(title: &str, body: &str) -> String {
    format!(
        "{}<body><main id=\"main\" class=\"narrow\"><h1>{}</h1>{body}</main></body></html>",
        head(title, None),
        esc(title)
    )
}

/// A page of the inbox for a signed-in person: navigation, a live-status line, `body`.
pub fn page(title: &str, human: &str, csrf: Option<&str>, active: &str, body: &str) -> String {
    page_headed(title, &esc(title), human, csrf, active, body)
}

/// [`page`] whose `<h1>` is `heading` (markup, already escaped) rather than the tab's title.
pub fn page_headed(
    title: &str,
    heading: &str,
    human: &str,
    csrf: Option<&str>,
    active: &str,
    body: &str,
) -> String {
    let links = [
        ("/", "Inbox"),
        ("/agents", "Agents"),
        ("/audit", "Audit"),
        ("/decisions", "Decisions"),
        ("/stats", "Stats"),
    ];
    let nav: String = links
        .iter()
        .map(|(href, name)| {
            let current = if *href == active {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!("<a href=\"{href}\"{current}>{name}</a>")
        })
        .collect();
    let logout = csrf
        .map(|t| {
            format!(
                "<form method=\"post\" action=\"/logout\" class=\"logout\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                 <button type=\"submit\">Sign out</button></form>",
                esc(t)
            )
        })
        .unwrap_or_default();
    format!(
        "{}<body><header><nav aria-label=\"Main\">{nav}</nav>\
         <span class=\"who\">{}</span>{logout}</header>\
         <p id=\"live\" class=\"live\" role=\"status\" aria-live=\"polite\"></p>\
         <p id=\"outcome\" class=\"outcome\" role=\"status\" aria-live=\"assertive\"></p>\
         <main id=\"main\"><h1>{heading}</h1>{body}</main></body></html>",
        head(title, csrf),
        esc(human),
    )
}

/// `<a href="…">text</a>` with both escaped (hrefs are built from checked ids only).
pub fn link(href: &str, text: &str) -> String {
    format!("<a href=\"{}\">{}</a>", esc(href), esc(text))
}

/// Percent-encodes a query value.
pub fn query_value(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_from_a_ledger_is_text() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(query_value("a b&c"), "a%20b%26c");
    }
}
