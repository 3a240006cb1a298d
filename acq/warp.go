package acq

// OutputWarper is implemented by Proposers that want their GP fitted to
// warped observations: the host then passes the standardized values
// through a monotone transform fitted to them (a Yeo–Johnson power
// transform restricted to compressing the lower tail) before fitting, so
// that a few very bad observations do not dominate the length-scales. The
// transform is monotone, so the order of the observations and of the
// posterior means is what it was.
type OutputWarper interface {
	WarpOutputs() bool
}
