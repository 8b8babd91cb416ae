package leveliter

import (
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
)

// File is one file of a level as the Iter sees it.
type File struct {
	// Smallest and Largest are the smallest and largest internal keys of the
	// file, point keys and range tombstones together. Largest may be a range
	// deletion sentinel (base.MakeRangeDeleteSentinel), exclusive of its user
	// key.
	Smallest, Largest []byte
	// Data is the engine's own: the Iter passes the *File to the OpenFunc
	// and returns it from CurrentFile, and never looks inside.
	Data any
}

// OpenFunc opens the point iterator of f. lower and upper are the Iter's
// user-key bounds where f straddles them and nil where f lies inside; the
// returned iterator may use them to avoid reading past a bound but is not
// required to apply them. The Iter closes the returned iterator when it
// leaves f.
type OpenFunc func(f *File, lower, upper []byte) (base.InternalIterator, error)

// CheckFiles reports whether files form a valid level: every bound is an
// internal key, Smallest <= Largest within each file, and each file's
// Largest sorts before the next file's Smallest. The Iter relies on this
// without checking it; CheckFiles is for the code that builds levels (and
// for tests), which should call it once per level, not once per iterator.
func CheckFiles(files []File) error {
	for i := range files {
		f := &files[i]
		if !base.Valid(f.Smallest) || !base.Valid(f.Largest) {
			return fmt.Errorf("leveliter: file %d: bounds %q, %q are not internal keys", i, f.Smallest, f.Largest)
		}
		if base.Compare(f.Smallest, f.Largest) > 0 {
			return fmt.Errorf("leveliter: file %d: smallest %s > largest %s",
				i, base.FormatKey(f.Smallest), base.FormatKey(f.Largest))
		}
		if i > 0 && base.Compare(files[i-1].Largest, f.Smallest) >= 0 {
			return fmt.Errorf("leveliter: file %d overlaps file %d: %s >= %s",
				i-1, i, base.FormatKey(files[i-1].Largest), base.FormatKey(f.Smallest))
		}
	}
	return nil
}
