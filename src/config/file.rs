//! The config file (`--config`, TOML): the stamped fields' names at the
//! top, `[engine]` and `[serve]` tables with the flags' names. Unknown keys
//! are rejected, so a typo fails loudly.

use std::path::Path;

use serde::Deserialize;

use super::defaults::{DEFAULT_ROOT_FIELD, DEFAULT_SIMHASH_FIELD};
use super::engine::EngineSettings;
use super::fields::{StampedFieldNames, StampedFields};
use super::serve::ServeSettings;

/// The config file: the names of the stamped fields at the top, engine
/// settings in an `[engine]` table (same names as the flags, with `_`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub root_field: Option<String>,
    pub simhash_field: Option<String>,
    #[serde(default)]
    pub engine: EngineSettings,
    #[serde(default)]
    pub serve: ServeSettings,
}

impl ConfigFile {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            anyhow::anyhow!("cannot read config file {}: {error}", path.display())
        })?;
        toml::from_str(&text)
            .map_err(|error| anyhow::anyhow!("config file {}: {error}", path.display()))
    }
}

impl StampedFieldNames {
    /// The names from the flags, else the config file, else the defaults.
    pub fn resolve(self, file: &ConfigFile) -> StampedFields {
        StampedFields {
            root_field: self
                .root_field
                .or_else(|| file.root_field.clone())
                .unwrap_or_else(|| DEFAULT_ROOT_FIELD.to_string()),
            simhash_field: self
                .simhash_field
                .or_else(|| file.simhash_field.clone())
                .unwrap_or_else(|| DEFAULT_SIMHASH_FIELD.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::{ServeOptions, StampedFields};

    #[test]
    fn config_file_rejects_typos() {
        assert!(toml::from_str::<ConfigFile>("[engine]\nmax_distanse = 5").is_err());
        assert!(toml::from_str::<ConfigFile>("[engine]\nmode = \"longest:0\"").is_err());
        assert!(toml::from_str::<ConfigFile>("rootfield = \"x\"").is_err());
    }

    #[test]
    fn the_sidecar_is_configured_from_the_file_too() {
        let file: ConfigFile = toml::from_str(
            r#"
root_field = "story_id"
[engine]
max_distance = 2
retention = "24h"
[serve]
upstream = "https://search.internal:9200"
listen = "127.0.0.1:9300"
max_content_length = "50mb"
state_dir = "/var/lib/neardup"
fsync = "1s"
install_template = true
template_patterns = ["news*", "blog-*"]
[serve.upstream_tls]
ca = "/etc/neardup/http_ca.crt"
[[serve.index]]
pattern = "blog-*"
fields = ["headline", "body.text"]
headline_field = "headline"
"#,
        )
        .expect("valid config");
        assert_eq!(file.root_field.as_deref(), Some("story_id"));
        assert_eq!(file.engine.max_distance, Some(2));
        assert_eq!(file.serve.index[0].fields, ["headline", "body.text"]);
        let fields = StampedFields {
            root_field: "story_id".into(),
            simhash_field: "simhash".into(),
        };
        assert_eq!(
            file.serve.upstream_tls.ca,
            Some(PathBuf::from("/etc/neardup/http_ca.crt"))
        );
        let without_ca = ServeSettings {
            upstream_tls: crate::config::UpstreamTlsSettings::default(),
            ..file.serve.clone()
        };
        let options = ServeOptions::from_settings(&without_ca, fields, "digest".into())
            .expect("valid serve settings");
        assert!(options.install_template);
        assert_eq!(options.template_patterns, ["news*", "blog-*"]);
        assert_eq!(options.listen, "127.0.0.1:9300");
        assert_eq!(options.limits.max_content_length, 50 << 20);
        assert_eq!(
            options.fsync,
            crate::persist::FsyncPolicy::Interval(std::time::Duration::from_secs(1))
        );
        let state = options.state.expect("a state directory");
        assert_eq!(state.dir, PathBuf::from("/var/lib/neardup"));
        assert_eq!(state.fsync, options.fsync);
        assert!(
            toml::from_str::<ConfigFile>(
                "[serve]
listen_on = \"x\""
            )
            .is_err()
        );
    }
}
