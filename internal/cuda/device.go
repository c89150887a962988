package cuda

import "fmt"

// DeviceAttribute is a CUdevice_attribute: a property the driver reports
// as an integer through cuDeviceGetAttribute. The constants below are the
// ones goamp uses; any other value from cuda.h may be passed too.
type DeviceAttribute int32

// Device attributes (values from cuda.h's CUdevice_attribute).
const (
	AttrMaxThreadsPerBlock           DeviceAttribute = 1
	AttrMaxBlockDimX                 DeviceAttribute = 2
	AttrMaxGridDimX                  DeviceAttribute = 5
	AttrMaxSharedMemoryPerBlock      DeviceAttribute = 8  // bytes a block gets without opting in (48 KiB)
	AttrTotalConstantMemory          DeviceAttribute = 9  // bytes
	AttrWarpSize                     DeviceAttribute = 10 // threads
	AttrMaxRegistersPerBlock         DeviceAttribute = 12 // 32-bit registers
	AttrClockRate                    DeviceAttribute = 13 // kHz, typical SM clock
	AttrMultiprocessorCount          DeviceAttribute = 16
	AttrMemoryClockRate              DeviceAttribute = 36 // kHz, peak
	AttrGlobalMemoryBusWidth         DeviceAttribute = 37 // bits
	AttrL2CacheSize                  DeviceAttribute = 38 // bytes
	AttrMaxThreadsPerMultiprocessor  DeviceAttribute = 39
	AttrComputeCapabilityMajor       DeviceAttribute = 75
	AttrComputeCapabilityMinor       DeviceAttribute = 76
	AttrMaxSharedMemoryPerMultiproc  DeviceAttribute = 81 // bytes
	AttrMaxRegistersPerMultiproc     DeviceAttribute = 82
	AttrMaxSharedMemoryPerBlockOptin DeviceAttribute = 97 // bytes a block may get after Function.SetMaxDynamicSharedMemory
)

// Device is one GPU as the driver numbers it. It is a small value: copy it
// freely. Ordinal is the index from 0 to DeviceCount()-1, the number that
// CUDA_VISIBLE_DEVICES and nvidia-smi's order refer to.
type Device struct {
	Ordinal int
	h       int32 // CUdevice
}

// DeviceCount is the number of GPUs the driver exposes to this process.
func DeviceCount() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var n int32
	if r := drv.cuDeviceGetCount(&n); r != 0 {
		return 0, newError("cuDeviceGetCount", r)
	}
	return int(n), nil
}

// GetDevice returns the device with the given ordinal; an ordinal out of
// range gives an error matching ErrNoDevice.
func GetDevice(ordinal int) (Device, error) {
	if err := Init(); err != nil {
		return Device{}, err
	}
	var h int32
	if r := drv.cuDeviceGet(&h, int32(ordinal)); r != 0 {
		return Device{}, newError("cuDeviceGet", r)
	}
	return Device{Ordinal: ordinal, h: h}, nil
}

// Devices lists every device, in ordinal order.
func Devices() ([]Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	ds := make([]Device, n)
	for i := range ds {
		if ds[i], err = GetDevice(i); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// Name is the marketing name, such as "NVIDIA H100 80GB HBM3".
func (d Device) Name() (string, error) {
	if err := Init(); err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	if r := drv.cuDeviceGetName(&buf[0], int32(len(buf)), d.h); r != 0 {
		return "", newError("cuDeviceGetName", r)
	}
	return cBytes(buf), nil
}

// Attribute returns one device attribute.
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var v int32
	if r := drv.cuDeviceGetAttribute(&v, int32(a), d.h); r != 0 {
		e := newError("cuDeviceGetAttribute", r)
		e.Op = fmt.Sprintf("cuDeviceGetAttribute(%d)", a)
		return 0, e
	}
	return int(v), nil
}

// TotalMemory is the device memory in bytes.
func (d Device) TotalMemory() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var b uintptr
	if r := drv.cuDeviceTotalMem(&b, d.h); r != 0 {
		return 0, newError("cuDeviceTotalMem", r)
	}
	return int(b), nil
}

// Properties are the device facts a kernel chooser needs: what fits in a
// block (threads, shared memory, registers), how many blocks run at once
// (multiprocessors) and which instructions exist (compute capability).
type Properties struct {
	Name                         string
	ComputeMajor, ComputeMinor   int // compute capability, 9.0 for H100
	TotalMemory                  int // bytes
	MultiProcessors              int
	MaxThreadsPerBlock           int
	MaxThreadsPerMultiProcessor  int
	WarpSize                     int
	SharedMemoryPerBlock         int // bytes, without opting in
	MaxSharedMemoryPerBlockOptin int // bytes, after Function.SetMaxDynamicSharedMemory
	SharedMemoryPerMultiproc     int // bytes
	RegistersPerBlock            int
	L2CacheSize                  int // bytes
	ClockRateKHz                 int // 0 where the driver no longer reports it
	MemoryClockRateKHz           int // 0 where the driver no longer reports it
	MemoryBusWidth               int // bits
}

// Properties reads all of Properties from the driver.
func (d Device) Properties() (Properties, error) {
	var p Properties
	var err error
	if p.Name, err = d.Name(); err != nil {
		return p, err
	}
	if p.TotalMemory, err = d.TotalMemory(); err != nil {
		return p, err
	}
	for _, f := range []struct {
		a   DeviceAttribute
		dst *int
	}{
		{AttrComputeCapabilityMajor, &p.ComputeMajor},
		{AttrComputeCapabilityMinor, &p.ComputeMinor},
		{AttrMultiprocessorCount, &p.MultiProcessors},
		{AttrMaxThreadsPerBlock, &p.MaxThreadsPerBlock},
		{AttrMaxThreadsPerMultiprocessor, &p.MaxThreadsPerMultiProcessor},
		{AttrWarpSize, &p.WarpSize},
		{AttrMaxSharedMemoryPerBlock, &p.SharedMemoryPerBlock},
		{AttrMaxSharedMemoryPerBlockOptin, &p.MaxSharedMemoryPerBlockOptin},
		{AttrMaxSharedMemoryPerMultiproc, &p.SharedMemoryPerMultiproc},
		{AttrMaxRegistersPerBlock, &p.RegistersPerBlock},
		{AttrL2CacheSize, &p.L2CacheSize},
		{AttrGlobalMemoryBusWidth, &p.MemoryBusWidth},
	} {
		if *f.dst, err = d.Attribute(f.a); err != nil {
			return p, err
		}
	}
	// The clock rates are deprecated attributes (CUDA 13 dropped them from
	// the runtime's cudaDeviceProp); a driver that refuses them leaves 0.
	p.ClockRateKHz, _ = d.Attribute(AttrClockRate)
	p.MemoryClockRateKHz, _ = d.Attribute(AttrMemoryClockRate)
	return p, nil
}

// String is a one-line summary for logs and `goamp devices`.
func (p Properties) String() string {
	return fmt.Sprintf("%s, sm_%d%d, %d SMs, %.1f GiB, %d threads/block, warp %d, smem %d KiB/block (%d KiB opt-in), L2 %d MiB, %d MHz",
		p.Name, p.ComputeMajor, p.ComputeMinor, p.MultiProcessors, float64(p.TotalMemory)/(1<<30),
		p.MaxThreadsPerBlock, p.WarpSize, p.SharedMemoryPerBlock>>10, p.MaxSharedMemoryPerBlockOptin>>10,
		p.L2CacheSize>>20, p.ClockRateKHz/1000)
}

// PrimaryContext retains the device's primary context, the one context per
// device that the CUDA runtime and libraries such as cuBLAS also use, so
// memory and streams can be shared with them. Each call adds a reference;
// Release the Context when done.
func (d Device) PrimaryContext() (*Context, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	var h uintptr
	if r := drv.cuDevicePrimaryCtxRetain(&h, d.h); r != 0 {
		return nil, newError("cuDevicePrimaryCtxRetain", r)
	}
	return &Context{dev: d, h: h}, nil
}
