package zonestore

import "github.com/ontimedns/ontime/plugin/fastpack"

// fastpack finds the block's answerer of EXPIRE for transfers by this
// interface: a method renamed here would leave every transfer without
// it, and nothing else would say so.
var _ fastpack.ExpireAnswerer = (*Handler)(nil)
