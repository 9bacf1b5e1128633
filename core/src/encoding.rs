//! Reading the bytes of files other tools wrote (docs/protocol.md §20): a UTF-8 byte order mark, which
//! PowerShell 5 writes, is skipped (this crate never writes one); text that is not UTF-8 is
//! located to the byte, so the user can find it.

/// The UTF-8 encoding of U+FEFF.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The bytes without a leading UTF-8 BOM.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// Where text stops being UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotUtf8 {
    /// 0-based offset of the first invalid byte in the file (a BOM counted).
    pub offset: usize,
    /// The byte found there.
    pub byte: u8,
    /// 1-based line and column (in characters) of that byte.
    pub line: usize,
    pub column: usize,
}

impl NotUtf8 {
    /// `invalid UTF-8 (byte 0xff) at byte offset 17`: the one-line message every reader uses.
    pub fn message(&self) -> String {
        format!(
            "invalid UTF-8 (byte 0x{:02x}) at byte offset {}; the file must be UTF-8 text",
            self.byte, self.offset
        )
    }
}

/// The file's text, a BOM skipped, or where its UTF-8 breaks.
pub fn utf8_text(bytes: &[u8]) -> Result<&str, NotUtf8> {
    let skipped = bytes.len() - strip_bom(bytes).len();
    let body = strip_bom(bytes);
    std::str::from_utf8(body).map_err(|e| {
        let valid = e.valid_up_to();
        // The prefix up to `valid` is UTF-8 by the error's own account.
        let before = body
            .get(..valid)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("");
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        NotUtf8 {
            offset: skipped + valid,
            byte: body.get(valid).copied().unwrap_or(0),
            line: before.matches('\n').count() + 1,
            column: before.get(line_start..).map_or(0, |s| s.chars().count()) + 1,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bom_is_skipped_and_only_at_the_start() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBF{}"), b"{}");
        assert_eq!(strip_bom(b"{}"), b"{}");
        assert_eq!(strip_bom(b"{\xEF\xBB\xBF}"), b"{\xEF\xBB\xBF}");
        assert_eq!(utf8_text(b"\xEF\xBB\xBFa = 1\n"), Ok("a = 1\n"));
    }

    #[test]
    fn invalid_bytes_are_located() {
        let e = utf8_text(b"a = 1\nb = \"\xC3\x28\"\n").unwrap_err();
        assert_eq!((e.offset, e.byte, e.line, e.column), (11, 0xc3, 2, 6));
        assert_eq!(
            e.message(),
            "invalid UTF-8 (byte 0xc3) at byte offset 11; the file must be UTF-8 text"
        );
        // Offsets count the BOM: they are offsets into the file as stored.
        let e = utf8_text(b"\xEF\xBB\xBF\xFF").unwrap_err();
        assert_eq!((e.offset, e.byte, e.line, e.column), (3, 0xff, 1, 1));
        // A sequence cut off at the end of the file.
        let e = utf8_text("é".as_bytes().get(..1).unwrap()).unwrap_err();
        assert_eq!(e.offset, 0);
    }
}
