package admission_test

import (
	"fmt"

	"github.com/codemode/codemode/admission"
)

func ExampleBudget() {
	b := admission.NewBudget(1 << 30)
	release, err := b.Reserve(768 << 20) // a run's memory limit
	fmt.Println(err)
	_, err = b.Reserve(512 << 20) // a second does not fit
	fmt.Println(err)
	release()
	fmt.Println(b.InUse())
	// Output:
	// <nil>
	// admission: 512 MiB do not fit the memory budget: 768 MiB of 1 GiB are reserved
	// 0
}
