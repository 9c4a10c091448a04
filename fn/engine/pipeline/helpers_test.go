package pipeline_test

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
)

func emitStream(res *pipeline.Result) ([]byte, error) { return emit.Stream(res.Docs) }
