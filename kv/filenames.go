package kv

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// File names in a database directory. Part of the on-disk format.
//
//	LOCK              held while the database is open
//	CURRENT           names the live MANIFEST
//	MANIFEST-000005   the version edits (kv/internal/manifest)
//	000007.log        a write-ahead log
//	000009.sst        a table
//	*.tmp             a file being written; removed at open
type fileType int

const (
	fileTypeLog fileType = iota
	fileTypeTable
	fileTypeManifest
	fileTypeCurrent
	fileTypeLock
	fileTypeTemp
	fileTypeOther
)

func makeFilename(dir string, t fileType, num uint64) string {
	switch t {
	case fileTypeLog:
		return filepath.Join(dir, fmt.Sprintf("%06d.log", num))
	case fileTypeTable:
		return filepath.Join(dir, fmt.Sprintf("%06d.sst", num))
	case fileTypeManifest:
		return filepath.Join(dir, fmt.Sprintf("MANIFEST-%06d", num))
	case fileTypeCurrent:
		return filepath.Join(dir, "CURRENT")
	case fileTypeLock:
		return filepath.Join(dir, "LOCK")
	}
	panic("kv: bad file type")
}

// parseFilename classifies a directory entry.
func parseFilename(name string) (fileType, uint64) {
	switch {
	case name == "CURRENT":
		return fileTypeCurrent, 0
	case name == "LOCK":
		return fileTypeLock, 0
	case strings.HasSuffix(name, ".tmp"):
		return fileTypeTemp, 0
	case strings.HasPrefix(name, "MANIFEST-"):
		if n, err := strconv.ParseUint(name[len("MANIFEST-"):], 10, 64); err == nil {
			return fileTypeManifest, n
		}
	case strings.HasSuffix(name, ".log"):
		if n, err := strconv.ParseUint(strings.TrimSuffix(name, ".log"), 10, 64); err == nil {
			return fileTypeLog, n
		}
	case strings.HasSuffix(name, ".sst"):
		if n, err := strconv.ParseUint(strings.TrimSuffix(name, ".sst"), 10, 64); err == nil {
			return fileTypeTable, n
		}
	}
	return fileTypeOther, 0
}
