//! What placing a document writes: its line with the stamps inserted,
//! and the counts of the run's summary.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::Value;

use super::options::{StampOptions, StampSummary};
use super::read::PendingDocument;
use crate::engine::Placed;
use crate::units::{Fingerprint, format_fingerprint};

/// What placing counts, and the stamped lines it writes.
pub(super) struct Placer<'run> {
    options: &'run StampOptions,
    pub(super) summary: StampSummary,
    pub(super) class_documents: HashMap<Fingerprint, u64>,
}

impl<'run> Placer<'run> {
    pub(super) fn new(options: &'run StampOptions) -> Self {
        Placer {
            options,
            summary: StampSummary::default(),
            class_documents: HashMap::new(),
        }
    }

    /// Counts the configured fields a document held no text in.
    pub(super) fn count_gaps<'field>(&mut self, fields: impl IntoIterator<Item = &'field str>) {
        for field in fields {
            *self
                .summary
                .fields_without_text
                .entry(field.to_string())
                .or_default() += 1;
        }
    }

    /// Writes `document`'s line, stamped where it was placed.
    pub(super) fn write(
        &mut self,
        document: PendingDocument,
        placed: Option<Placed>,
        output: &mut impl Write,
    ) -> io::Result<()> {
        let Some(placed) = placed else {
            self.summary.without_text += 1;
            return output.write_all(&document.line);
        };
        self.summary.stamped += 1;
        if placed.exact_hit {
            self.summary.exact_hits += 1;
        }
        *self.class_documents.entry(placed.root).or_default() += 1;
        let root = format_fingerprint(placed.root);
        let own = format_fingerprint(placed.fingerprint);
        let stamps = [
            (self.options.root_field.as_str(), root.as_str()),
            (self.options.simhash_field.as_str(), own.as_str()),
        ];
        let Value::Object(object) = document.source else {
            return output.write_all(&document.line);
        };
        let content = &document.line[document.content.clone()];
        let stamped = document.target.stamp(object, content, &stamps);
        output.write_all(&document.line[..document.content.start])?;
        output.write_all(&stamped)?;
        output.write_all(&document.line[document.content.end..])
    }
}
