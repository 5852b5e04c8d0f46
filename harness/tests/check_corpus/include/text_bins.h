// Which of the BINS bins a byte of text counts in; included by the whole-program examples.
#pragma once

__device__ inline unsigned int bin_of(unsigned char c)
{
    return c % BINS;
}
