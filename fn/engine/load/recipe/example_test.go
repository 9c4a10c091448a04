package recipe_test

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// A recipe is merged with its `defaults:` chain, base first: the recipe's
// own keys win, the base fills in the rest.
func ExampleLoader_Load() {
	files := source.Memory{
		"configs/base.yaml": []byte("policy:\n  model_name: base-model\n  train_global_batch_size: 512\ncluster:\n  num_nodes: 1\n"),
		"configs/sft.yaml":  []byte("defaults: base.yaml\npolicy:\n  model_name: qwen3\ncluster:\n  num_nodes: 4\n"),
	}
	loaded, err := recipe.NewLoader(files).Load("configs/sft.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := tree.ToYAML(loaded.Tree)
	fmt.Println(loaded.Files)
	fmt.Print(string(out))
	// Output:
	// [configs/base.yaml configs/sft.yaml]
	// policy:
	//   model_name: qwen3
	//   train_global_batch_size: 512
	// cluster:
	//   num_nodes: 4
}
