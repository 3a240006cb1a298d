package host

import (
	"slices"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/safetext"
	"github.com/tesbo/tesbo/sdk"
)

// Limits on what a trial keeps of its evaluation's metadata
// (sdk.Result.Meta), as its error is kept to store.MaxErrorBytes: every
// command that reads the study (trials, resume, serve) loads every
// trial's metadata, so a plugin returning a log file in it would make a
// study of a thousand trials gigabytes large.
const (
	MaxMetaKeys  = 64       // entries a trial keeps
	MaxMetaBytes = 64 << 10 // bytes of keys and values a trial keeps
	maxMetaKey   = 128      // bytes of one key
)

// metaDroppedKey is the host's metadata key counting the entries
// cleanMeta left out.
const metaDroppedKey = "meta_dropped"

// cleanMeta returns what a trial keeps of an evaluation's metadata, and
// how many entries it leaves out. Entries are taken in key order while
// they fit MaxMetaKeys and MaxMetaBytes; a key that is empty, longer than
// maxMetaKey bytes, or holds a control character or invalid UTF-8 is left
// out (a key names a column of 'trials --format csv'); a value's control
// characters and invalid bytes are escaped (safetext.Terminal), so that
// printing it cannot drive a terminal.
func cleanMeta(m map[string]string) (map[string]string, int) {
	if len(m) == 0 {
		return m, 0
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(map[string]string, min(len(m), MaxMetaKeys))
	size, dropped := 0, 0
	for _, k := range keys {
		v := safetext.Terminal(m[k])
		if k == "" || len(k) > maxMetaKey || safetext.HasControl(k) ||
			len(out) == MaxMetaKeys || size+len(k)+len(v) > MaxMetaBytes {
			dropped++
			continue
		}
		out[k] = v
		size += len(k) + len(v)
	}
	if dropped > 0 {
		out[metaDroppedKey] = strconv.Itoa(dropped)
	}
	return out, dropped
}

// keepMeta replaces r's metadata by what trial id keeps of it (cleanMeta),
// with a warning when entries are left out.
func keepMeta(r *sdk.Result, id int, log zerolog.Logger) {
	var dropped int
	if r.Meta, dropped = cleanMeta(r.Meta); dropped > 0 {
		log.Warn().Int("trial", id).Int("entries", dropped).Msgf("left out of the trial's metadata: keys must be non-empty printable text of at most %d bytes, and a trial keeps at most %d entries and %d bytes", maxMetaKey, MaxMetaKeys, MaxMetaBytes)
	}
}
