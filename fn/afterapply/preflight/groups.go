package preflight

import (
	"encoding/json"
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

func fromData(d rendered.Doc, into any) error {
	b, err := json.Marshal(d.Data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", d.Describe(), err)
	}
	return nil
}
