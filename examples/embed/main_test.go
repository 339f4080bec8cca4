package main

// Example runs the guide: the refund's ask reaches the Go approver with its
// validated arguments and reason, the program's result comes back, and both
// nested calls are listed in order, neither failed.
func Example() {
	main()
	// Output:
	// approve refund {"id":"o-17","amount":2100} (refunds move money)? yes
	// result: {"logs":[],"result":{"order":"o-17","refunded":2100}}
	// call 1: get_order({"id":"o-17"}) error=false
	// call 2: refund({"id":"o-17","amount":2100}) error=false
}
