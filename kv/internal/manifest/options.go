package manifest

import (
	"errors"
	"fmt"
)

// DefaultMaxManifestSize is the default Options.MaxManifestSize.
const DefaultMaxManifestSize = 4 << 20

// Options configure a VersionSet. The zero value (or nil) means defaults.
type Options struct {
	// MaxManifestSize is the MANIFEST length in bytes past which the next
	// LogAndApply rotates to a new MANIFEST holding a snapshot. A MANIFEST
	// is never rotated before it is twice as long as the snapshot it began
	// with, so a large database does not rewrite its whole state on every
	// edit. 0 means DefaultMaxManifestSize; negative is invalid.
	MaxManifestSize int64
	// CheckReplayed, when set, is called by Load after the MANIFEST is
	// replayed and before anything is written: the set answers Current,
	// LogNum, ManifestFileNum (of the MANIFEST replayed) and TornTail. An
	// error fails Load and leaves the directory untouched, so that damage
	// the engine detects (files the state needs are missing) is reported
	// against the MANIFEST that holds it, and not papered over by the new
	// MANIFEST Load would start.
	CheckReplayed func(vs *VersionSet) error
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.MaxManifestSize == 0 {
		o.MaxManifestSize = DefaultMaxManifestSize
	}
}

// Validate returns an error listing every invalid field, or nil.
func (o *Options) Validate() error {
	var errs []error
	if o.MaxManifestSize < 0 {
		errs = append(errs, fmt.Errorf("manifest: Options.MaxManifestSize = %d: must not be negative", o.MaxManifestSize))
	}
	return errors.Join(errs...)
}

// prepare returns a defaulted, validated copy of opts.
func prepare(opts *Options) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	return o, o.Validate()
}
