package bench

import (
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/storebridge"
	"github.com/tesbo/tesbo/store"
)

// hostStorage is the host's handle on the bench's study database, which
// the bench also reads directly (its runs' records and trials).
func hostStorage(db store.Storage) *host.Storage { return storebridge.Wrap(db).(*host.Storage) }
