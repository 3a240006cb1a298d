package host

import "github.com/tesbo/tesbo/store"

// boundedError returns err with its message as a trial stores it (see
// store.CleanError: at most store.MaxErrorBytes), so that the log lines
// quoting it stay small too; errors.Is and errors.As still see err.
func boundedError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := store.CleanError(msg); clean != msg {
		return &cleanedError{msg: clean, err: err}
	}
	return err
}

type cleanedError struct {
	msg string
	err error
}

func (e *cleanedError) Error() string { return e.msg }
func (e *cleanedError) Unwrap() error { return e.err }
