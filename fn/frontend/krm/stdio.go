package krm

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Standalone sets rw up as command.Build does for arguments: the function
// config from the first file, items from the rest ("-" is stdin, read
// first), bare items written back without the list or reader annotations.
func Standalone(rw *kio.ByteReadWriter, stdin io.Reader, args []string) error {
	b, err := os.ReadFile(args[0])
	if err != nil {
		return fmt.Errorf("unable to read configuration file %q: %w", args[0], err)
	}
	if rw.FunctionConfig, err = yaml.Parse(string(b)); err != nil {
		return fmt.Errorf("unable to parse configuration file %q: %w", args[0], err)
	}
	var inputs [][]byte
	for _, a := range args[1:] {
		var data []byte
		if a == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(a)
		}
		if err != nil {
			return fmt.Errorf("unable to read %q: %w", a, err)
		}
		if a == "-" {
			inputs = append([][]byte{data}, inputs...)
		} else {
			inputs = append(inputs, data)
		}
	}
	// A document separator between files, so that one file's last line
	// cannot run into the next file's first.
	rw.Reader = bytes.NewReader(bytes.Join(inputs, []byte("\n---\n")))
	rw.KeepReaderAnnotations = false
	rw.NoWrap = true
	return nil
}

// MaxFunctionInput bounds the ResourceList the function reads: it carries
// a run's input files (at most recipe.MaxRunInput together) and the items
// it passes through. kyaml holds each item as nodes, ~400 bytes of memory
// per input byte for many tiny items (a 6 MB list of 100,000 items took
// 2.5 GB before this cap), so the cap keeps the function under 1 GB
// (docs/reliability.md).
const MaxFunctionInput = 2 << 20

// ReadCapped reads stdin whole when it is used, failing past the cap.
func ReadCapped(stdin io.Reader, used bool) (io.Reader, error) {
	if !used {
		return stdin, nil
	}
	b, err := io.ReadAll(io.LimitReader(stdin, MaxFunctionInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the ResourceList: %w", err)
	}
	if len(b) > MaxFunctionInput {
		return nil, fmt.Errorf("the function's input (stdin) is over the %d-byte limit; expected a ResourceList of one package's runs, their input files and the items to pass through (docs/reliability.md)", MaxFunctionInput)
	}
	return bytes.NewReader(b), nil
}
