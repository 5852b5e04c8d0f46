// The shared declarations of a multi-file sample: the host entry points (defined in another
// .cu file) and the device helper that the kernel inlines.
#pragma once

#define HISTO_BINS 16

typedef unsigned int uint;

extern "C" void histogramInit(void);
extern "C" void histogramRun(uint *d_histogram, const uint *d_data, uint count);
extern "C" void histogramClose(void);

inline __device__ uint bin_of(uint value)
{
    return value % HISTO_BINS;
}
