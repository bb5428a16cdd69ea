//! What the comparison of two short texts reports: the alignment's shape
//! and the repost reading's counts ([`super::compare_with`] fills them; the
//! rules of [`crate::confirm::short`] judge them).

/// The differences between two short texts, aligned in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EditSummary {
    /// Letters and digits of the shorter text.
    pub shorter_chars: usize,
    /// Letters and digits of the longer text.
    pub longer_chars: usize,
    /// Characters of the shorter text outside the common subsequence:
    /// what a reprint changed or dropped of it, or what another text says
    /// in another order.
    pub unmatched_in_shorter: usize,
    /// Gaps inside the texts (not at either edge) with characters on both
    /// sides: one word swapped for another.
    pub interior_substitutions: usize,
    /// Some gap replaces a numeral (digit or Chinese numeral) with another:
    /// "第二届" / "第三届", "七点半" / "九点半".
    pub numeral_replaced: bool,
    /// Some gap changes a Chinese content word (a noun, verb, adjective,
    /// name or numeral): replaces it, or adds or drops characters inside
    /// it ("开幕" / "闭幕", "李克强" / "李强"), or, at an edge, replaces
    /// part of the shorter text. Swapping or dropping a function word
    /// ("怎么" / "如何", "的"), or adding a whole word between two words,
    /// is not a change of content.
    pub content_word_changed: bool,
    /// Some gap inside the texts with characters on both sides changes a
    /// content word: one word swapped for another, the narrow case of
    /// `content_word_changed`.
    pub content_word_replaced: bool,
    /// A gap inside the texts holds a content word of the shorter text that
    /// the longer one lacks: the longer text is not the shorter one with
    /// words added ("全国政协十四届…" / "十四届全国人大…").
    pub content_word_dropped: bool,
    /// Edits a reader sees as changes of the text itself: gaps inside it
    /// (not at a field's edge) and words run into its start or end without
    /// punctuation or a space. A repost's marked tags and links are not.
    pub unmarked_edits: usize,
    /// The repost reading (see [`RepostReading`]).
    pub repost: RepostReading,
}

/// Two short texts read as "one text, plus what a repost put around it".
///
/// The shared span runs from the first to the last anchor (a run of at
/// least [`ANCHOR_CHARS`] letters matched in one piece, or a shorter one
/// at an edge of the shorter text) of the alignment.
/// What the longer text has outside the span is a comment, a tag or a
/// credit; what the shorter text has outside it was cut. Inside the span,
/// every gap is an edit of the text itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RepostReading {
    /// Letters of the shorter text inside the shared span.
    pub span_chars: usize,
    /// Letters of the shorter text outside the span (cut, or replaced by
    /// the other text's comment).
    pub cut_chars: usize,
    /// Letters of the shorter text inside the span that the longer lacks.
    pub inside_unmatched: usize,
    /// Gaps inside the span (credit lines aside).
    pub inside_edits: usize,
    /// Edits of content words: a content word swapped, cut or dropped
    /// inside the span, words run into the span without a break at its
    /// edges, or content of the shorter text replaced (not just cut) at an
    /// edge.
    pub content_changes: usize,
    /// The content changes that swap one verb or adjective for another
    /// inside the span (获悉 / 得知): a repost's rewording, allowed in
    /// shorter spans than other content changes
    /// ([`crate::confirm::short::allowed_content_changes`]).
    pub predicate_swaps: usize,
    /// Edits of names: a name, place or time (or a numeral word) swapped,
    /// added or dropped inside the span, one of the shorter text's
    /// replaced at an edge, or one run into the span.
    pub fact_changes: usize,
    /// Edits of figures: a numeral replaced by another, or digits added or
    /// dropped inside the span (but for digits a copy lost from the front of
    /// a number), or digits of the shorter text replaced at an edge.
    pub figure_changes: usize,
    /// A platform cut one of the texts short (see
    /// [`crate::fingerprint::letters::CUT_MARK`]): a cut copies
    /// mechanically, so the span may then hold no change of content
    /// ([`crate::confirm::short::repost_allows_join`]).
    pub cut_short: bool,
    /// The shorter text was cut off where the span ends and the longer goes
    /// on, but the span is a headline's length: too little to tell which
    /// text the cut came from (two posts may open alike).
    pub cut_too_soon: bool,
    /// Letters of the longer text after the span when the shorter text was
    /// cut off with an ellipsis where the span ends, a span longer than a
    /// headline (see [`crate::fingerprint::letters::CUT_MARK`]): what the
    /// cut hid, so neither a clause nor a comment weighed against the span
    /// ([`RepostReading::rest_hidden_by_cut`]).
    pub hidden_chars: usize,
    /// Clauses holding a content word that continue the sentence at an edge
    /// of the span (Chinese words run into it, or words after a comma or
    /// space that start no new sentence): the same sentence saying more.
    pub clauses: usize,
}

impl RepostReading {
    /// The longer text goes on where a cut hid the shorter one's rest
    /// (see [`RepostReading::hidden_chars`]).
    pub fn rest_hidden_by_cut(&self) -> bool {
        self.hidden_chars > 0
    }
}

impl EditSummary {
    /// The two texts have the same letters and digits, in the same order.
    pub fn identical(&self) -> bool {
        self.unmatched_in_shorter == 0 && self.shorter_chars == self.longer_chars
    }
}
