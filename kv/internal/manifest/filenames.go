package manifest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-db/strata/kv/internal/base"
)

// File names and the two small fixed formats of the MANIFEST directory.
//
// A MANIFEST is named MANIFEST-%06d after a file number allocated like any
// other (so it never collides with a WAL or SST number); longer numbers use
// more digits. CURRENT holds the name of the live MANIFEST followed by a
// single newline, e.g. "MANIFEST-000001\n", and is replaced atomically by
// writing CURRENT.tmp, syncing it, renaming it over CURRENT and syncing the
// directory. The names and the CURRENT layout are part of the on-disk
// format; never change them.
const (
	manifestPrefix = "MANIFEST-"
	currentName    = "CURRENT"
	currentTmpName = "CURRENT.tmp"
)

// ManifestName returns the file name of the MANIFEST with number num.
func ManifestName(num uint64) string { return fmt.Sprintf("%s%06d", manifestPrefix, num) }

// ParseManifestName returns the number of a MANIFEST file name and whether
// name is one.
func ParseManifestName(name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, manifestPrefix)
	if !ok || len(digits) < 6 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// parseCurrent returns the MANIFEST number named by the contents b of the
// CURRENT file at path.
func parseCurrent(b []byte, path string) (uint64, error) {
	name, ok := bytes.CutSuffix(b, []byte{'\n'})
	if ok {
		if n, ok := ParseManifestName(string(name)); ok {
			return n, nil
		}
	}
	return 0, base.Corruptf(path, 0, "expected %q followed by a newline, found %q", "MANIFEST-NNNNNN", b)
}

// The first record of every MANIFEST is a header: the 8 magic bytes
// "STRATAMF" followed by the format version as a uvarint. Version 1 is the
// only one: the records after the header are version edits as described in
// version_edit.go. A reader refuses any other magic or version. The header
// is part of the on-disk format; never change it.
const (
	manifestMagic   = "STRATAMF"
	manifestVersion = 1
)

func encodeHeader(dst []byte) []byte {
	dst = append(dst, manifestMagic...)
	return binary.AppendUvarint(dst, manifestVersion)
}

// checkHeader verifies a header record. file and offset name it in errors.
func checkHeader(rec []byte, file string, offset int64) error {
	rest, ok := bytes.CutPrefix(rec, []byte(manifestMagic))
	if !ok {
		return base.Corruptf(file, offset, "expected a header record starting with %q, found %q", manifestMagic, truncateForError(rec))
	}
	v, n := binary.Uvarint(rest)
	if n <= 0 || n != len(rest) {
		return base.Corruptf(file, offset, "header: expected a format version uvarint, found %q", rest)
	}
	if v != manifestVersion {
		// Not corruption: a newer build wrote it. Refuse rather than guess.
		return fmt.Errorf("manifest: %s: format version %d is not supported (this build reads version %d)", file, v, manifestVersion)
	}
	return nil
}

func truncateForError(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

func join(dir, name string) string { return filepath.Join(dir, name) }
