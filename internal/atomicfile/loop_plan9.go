package atomicfile

import "errors"

// errLinkLoop is the error a chain of too many symbolic links wraps; Plan 9
// has no ELOOP (nor symbolic links).
var errLinkLoop = errors.New("too many levels of symbolic links")
