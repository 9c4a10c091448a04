// Command hello is a tiny static binary used by the ociimage tests to prove
// that the image's binary survives the round trip and still runs.
package main

import "fmt"

func main() {
	fmt.Println("hello-from-image")
}
