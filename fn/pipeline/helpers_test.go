package pipeline_test

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/pipeline"
)

func emitStream(res *pipeline.Result) ([]byte, error) { return emit.Stream(res.Docs) }
