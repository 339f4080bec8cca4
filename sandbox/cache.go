package sandbox

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

const (
	// cacheEntries and cacheBytes bound the compiled-program cache: at most this many
	// programs, holding at most about this many bytes of compiled program between them
	// (compiledPerSourceByte per byte of source).
	cacheEntries = 512
	cacheBytes   = 256 << 20

	// compiledPerSourceByte is about what a compiled program holds per byte of its source:
	// goja's compiled form of a megabyte of dense statements takes 15–28 MB.
	compiledPerSourceByte = 32
)

// programs caches compiled programs by hash of language and source.
var programs = newProgramCache(cacheEntries, cacheBytes)

// programCache is a least-recently-used cache of compiled programs, bounded by entry count
// and by total source bytes. Safe for concurrent use.
type programCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int
	bytes      int                                 // guarded by mu
	order      *list.List                          // of *cacheEntry, most recent first; guarded by mu
	index      map[[sha256.Size]byte]*list.Element // guarded by mu
}

type cacheEntry struct {
	key [sha256.Size]byte
	p   *Program
}

func newProgramCache(maxEntries, maxBytes int) *programCache {
	return &programCache{
		maxEntries: maxEntries,
		maxBytes:   maxBytes,
		order:      list.New(),
		index:      make(map[[sha256.Size]byte]*list.Element),
	}
}

func (c *programCache) get(key [sha256.Size]byte) *Program {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.index[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).p
}

func (c *programCache) put(key [sha256.Size]byte, p *Program) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.index[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.index[key] = c.order.PushFront(&cacheEntry{key: key, p: p})
	c.bytes += p.size
	c.evict()
}

// SetProgramCacheBytes bounds the process's compiled-program cache to about n bytes of
// compiled programs (at least one program is kept), evicting the least recently used ones
// beyond it. The default is 256 MiB; a worker process, whose every byte its runs share,
// keeps a much smaller one.
func SetProgramCacheBytes(n int) {
	programs.mu.Lock()
	defer programs.mu.Unlock()
	programs.maxBytes = n
	programs.evict()
}

// ProgramCacheBytes is the compiled-program cache's bound in bytes (SetProgramCacheBytes).
func ProgramCacheBytes() int {
	programs.mu.Lock()
	defer programs.mu.Unlock()
	return programs.maxBytes
}

// evict drops the least recently used entries beyond the bounds. c.mu is held.
func (c *programCache) evict() {
	for c.order.Len() > c.maxEntries || (c.bytes > c.maxBytes && c.order.Len() > 1) {
		last := c.order.Back()
		e := last.Value.(*cacheEntry)
		c.order.Remove(last)
		delete(c.index, e.key)
		c.bytes -= e.p.size
	}
}

func (c *programCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
