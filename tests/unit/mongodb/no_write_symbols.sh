#!/usr/bin/env bash
# Fails when the MongoDB serving library references a libmongoc function outside the read-only
# allowlist (anything that could insert, update, delete, build indexes or run a write command).
set -euo pipefail
lib=$1
allowed='^(mongoc_init|mongoc_log_set_handler|mongoc_log_level_str|mongoc_uri_(new_with_error|destroy|has_option|get_option_as_int32|set_option_as_int32|set_appname)|mongoc_client_pool_(new_with_error|destroy|pop|push|set_error_api)|mongoc_read_prefs_(new|destroy)|mongoc_client_get_collection|mongoc_collection_(destroy|find_with_opts|aggregate|count_documents|estimated_document_count)|mongoc_cursor_(next|error|destroy)|mongoc_client_read_command_with_opts)$'
used=$(nm --undefined-only "$lib" | awk '{print $NF}' | grep -E '^mongoc_' | sort -u)
[[ -n $used ]] || { echo "no libmongoc symbols found in $lib (wrong file?)"; exit 1; }
bad=$(grep -Ev "$allowed" <<<"$used" || true)
if [[ -n $bad ]]; then
  echo "the MongoDB serving library references libmongoc functions outside the read-only allowlist:"
  echo "$bad"
  exit 1
fi
echo "ok: $(wc -l <<<"$used") libmongoc functions, all read-only:"
echo "$used"
