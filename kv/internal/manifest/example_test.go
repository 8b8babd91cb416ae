package manifest_test

import (
	"fmt"

	"github.com/strata-db/strata/kv/internal/base"
	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/vfs"
)

func Example() {
	fs := vfs.NewMem()
	fs.MkdirAll("db", 0o755)
	vs, err := manifest.Create(fs, "db", nil)
	if err != nil {
		panic(err)
	}

	// Four flushes, each adding an L0 file.
	for i := range 4 {
		seq := base.SeqNum(10 * (i + 1))
		meta := &manifest.FileMetadata{
			FileNum:     vs.NewFileNum(),
			Size:        1 << 20,
			Smallest:    base.AppendKey(nil, []byte("apple"), seq, base.KindSet),
			Largest:     base.AppendKey(nil, []byte("pear"), seq-9, base.KindSet),
			SmallestSeq: seq - 9, LargestSeq: seq,
		}
		err := vs.LogAndApply(&manifest.VersionEdit{
			LastSeq:  seq,
			NewFiles: []manifest.NewFile{{Level: 0, Meta: meta}},
		})
		if err != nil {
			panic(err)
		}
	}

	// L0 reached its trigger: compact it into L1.
	opts := manifest.PickerOptions{}
	c := manifest.Pick(vs.Current(), opts)
	fmt.Printf("compact L%d -> L%d, %d files, score %.2f\n", c.Level, c.OutputLevel, len(c.Inputs[0]), c.Score)
	c.MarkCompacting(true)
	edit := c.NewEdit()
	edit.NewFiles = append(edit.NewFiles, manifest.NewFile{Level: 1, Meta: &manifest.FileMetadata{
		FileNum: vs.NewFileNum(), Size: 4 << 20, Smallest: c.Smallest, Largest: c.Largest,
		SmallestSeq: 1, LargestSeq: 40,
	}})
	if err := vs.LogAndApply(edit); err != nil {
		panic(err)
	}
	c.MarkCompacting(false)
	fmt.Println("obsolete:", len(vs.TakeObsolete()))
	vs.Close()

	// Reopen: the state comes back from the MANIFEST.
	vs, err = manifest.Load(fs, "db", nil)
	if err != nil {
		panic(err)
	}
	defer vs.Close()
	fmt.Print(vs.Current())
	fmt.Println("last seq:", vs.LastSeq())
	// Output:
	// compact L0 -> L1, 4 files, score 1.00
	// obsolete: 4
	// L1:
	//   000006:[apple#40,SET-pear#1,SET] size=4194304
	// last seq: 40
}
