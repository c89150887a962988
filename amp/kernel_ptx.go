package amp

import (
	"fmt"

	"github.com/goamp/goamp/internal/kernel/ptx"
)

// retargetForDevice prepares goampgen's PTX (ISA 7.0, sm_75, which every
// driver since CUDA 11.0 loads on every GPU since Turing) for a device of
// compute capability major.minor under a driver of CUDA version driver:
// the newest PTX ISA the driver reads and the device's own target, so that
// the JIT may use what the device has. Where that ISA does not know the
// device (a device newer than the driver's table), the target stays sm_75,
// which the JIT compiles for any newer device.
func retargetForDevice(src string, driver, major, minor int) (string, error) {
	ver := ptx.VersionForDriver(driver)
	if ver[0] < 7 {
		return "", fmt.Errorf("the driver (CUDA %d.%d) reads PTX ISA up to %d.%d; goamp's kernels are PTX ISA 7.0: update the NVIDIA driver",
			driver/1000, driver%1000/10, ver[0], ver[1])
	}
	if sm := major*10 + minor; ptx.KnownTarget(sm) {
		if out, err := ptx.Retarget(src, ver, sm); err == nil {
			return out, nil
		}
	}
	out, err := ptx.Retarget(src, ver, 75)
	if err != nil {
		return "", fmt.Errorf("ptx: %w", err)
	}
	return out, nil
}
