//go:build linux && amd64 && !noasm

#include "textflag.h"

// func cpuSegmentLimit() (limit uint32, ok bool)
TEXT ·cpuSegmentLimit(SB), NOSPLIT, $0-5
	MOVL $0x7b, AX
	XORL BX, BX
	LSLL AX, BX // sets ZF when the selector names a segment it may read
	SETEQ CX
	MOVL BX, limit+0(FP)
	MOVB CX, ok+4(FP)
	RET
