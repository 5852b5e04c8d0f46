//! Launch shapes and the device limits they are checked against before anything runs.

use std::fmt;

use crate::error::{HarnessError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn x(x: u32) -> Self {
        Self { x, y: 1, z: 1 }
    }

    pub const fn xy(x: u32, y: u32) -> Self {
        Self { x, y, z: 1 }
    }

    pub fn product(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }

    pub fn as_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.y, self.z) {
            (1, 1) => write!(f, "{}", self.x),
            (_, 1) => write!(f, "({}, {})", self.x, self.y),
            _ => write!(f, "({}, {}, {})", self.x, self.y, self.z),
        }
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchShape {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: u32,
}

impl LaunchShape {
    pub const fn linear(blocks: u32, threads_per_block: u32) -> Self {
        Self {
            grid: Dim3::x(blocks),
            block: Dim3::x(threads_per_block),
            dynamic_shared_bytes: 0,
        }
    }

    pub const fn with_dynamic_shared(mut self, bytes: u32) -> Self {
        self.dynamic_shared_bytes = bytes;
        self
    }

    pub fn total_threads(&self) -> u64 {
        self.grid.product() * self.block.product()
    }
}

impl fmt::Display for LaunchShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let blocks = if self.grid.product() == 1 {
            "block"
        } else {
            "blocks"
        };
        let threads = if self.block.product() == 1 {
            "thread"
        } else {
            "threads"
        };
        write!(f, "{} {blocks} × {} {threads}", self.grid, self.block)?;
        if self.dynamic_shared_bytes > 0 {
            write!(f, " + {} B dynamic shared", self.dynamic_shared_bytes)?;
        }
        Ok(())
    }
}

/// What a device can launch; the cuda backend reads these from the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    pub max_threads_per_block: u32,
    pub max_block: Dim3,
    pub max_grid: Dim3,
    pub max_shared_bytes_per_block: u32,
}

impl DeviceLimits {
    /// The limits of every GPU since compute capability 3.0, which the emulator enforces too.
    pub const CUDA_DEFAULT: Self = Self {
        max_threads_per_block: 1024,
        max_block: Dim3 {
            x: 1024,
            y: 1024,
            z: 64,
        },
        max_grid: Dim3 {
            x: i32::MAX as u32,
            y: 65535,
            z: 65535,
        },
        max_shared_bytes_per_block: 48 * 1024,
    };

    /// Checks a launch of `entry` whose kernel declares `static_shared_bytes` of shared memory
    /// and, per the driver, can run at most `kernel_max_threads` threads per block.
    pub fn check(
        &self,
        entry: &str,
        shape: &LaunchShape,
        static_shared_bytes: u32,
        kernel_max_threads: u32,
    ) -> Result<()> {
        let refuse = |reason: String| HarnessError::BadLaunch {
            entry: entry.to_string(),
            grid: shape.grid.to_string(),
            block: shape.block.to_string(),
            reason,
        };
        let axes = ["x", "y", "z"];
        let block = shape.block.as_array();
        let grid = shape.grid.as_array();
        for axis in 0..3 {
            if block[axis] == 0 || grid[axis] == 0 {
                return Err(refuse(format!(
                    "every grid and block dimension must be at least 1, but {} {} is 0",
                    if block[axis] == 0 { "block" } else { "grid" },
                    axes[axis]
                )));
            }
            let max_block = self.max_block.as_array()[axis];
            if block[axis] > max_block {
                return Err(refuse(format!(
                    "block {} is {}, above the device's limit of {max_block}",
                    axes[axis], block[axis]
                )));
            }
            let max_grid = self.max_grid.as_array()[axis];
            if grid[axis] > max_grid {
                return Err(refuse(format!(
                    "grid {} is {}, above the device's limit of {max_grid}",
                    axes[axis], grid[axis]
                )));
            }
        }
        let threads = shape.block.product();
        let thread_limit = self.max_threads_per_block.min(kernel_max_threads);
        if threads > u64::from(thread_limit) {
            return Err(refuse(format!(
                "{threads} threads per block is above the limit of {thread_limit} for this kernel on this device"
            )));
        }
        let shared = u64::from(static_shared_bytes) + u64::from(shape.dynamic_shared_bytes);
        if shared > u64::from(self.max_shared_bytes_per_block) {
            return Err(refuse(format!(
                "it needs {shared} bytes of shared memory per block ({static_shared_bytes} static + {} dynamic), above the device's {} bytes",
                shape.dynamic_shared_bytes, self.max_shared_bytes_per_block
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: DeviceLimits = DeviceLimits::CUDA_DEFAULT;

    #[test]
    fn one_block_is_singular() {
        assert_eq!(
            LaunchShape::linear(1, 256).to_string(),
            "1 block × 256 threads"
        );
        let square = LaunchShape {
            grid: Dim3::xy(1, 1),
            block: Dim3::xy(32, 32),
            dynamic_shared_bytes: 0,
        };
        assert_eq!(square.to_string(), "1 block × (32, 32) threads");
        assert_eq!(LaunchShape::linear(2, 1).to_string(), "2 blocks × 1 thread");
        assert_eq!(
            LaunchShape::linear(2, 4)
                .with_dynamic_shared(16)
                .to_string(),
            "2 blocks × 4 threads + 16 B dynamic shared"
        );
    }

    #[test]
    fn accepts_the_largest_legal_shapes() {
        let shape = LaunchShape::linear(i32::MAX as u32, 1024).with_dynamic_shared(48 * 1024 - 512);
        LIMITS.check("k", &shape, 512, 1024).unwrap();
    }

    #[test]
    fn refuses_too_many_threads_with_one_sentence() {
        let error = LIMITS
            .check("histogram", &LaunchShape::linear(4, 2048), 0, 1024)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot launch histogram with grid 4 × block 2048: block x is 2048, above the device's limit of 1024"
        );
        let square = LaunchShape {
            grid: Dim3::x(1),
            block: Dim3::xy(64, 32),
            dynamic_shared_bytes: 0,
        };
        let error = LIMITS.check("k", &square, 0, 1024).unwrap_err().to_string();
        assert!(
            error.ends_with(
                "2048 threads per block is above the limit of 1024 for this kernel on this device"
            ),
            "{error}"
        );
    }

    #[test]
    fn refuses_zero_dimensions_grid_overflow_and_shared_overflow() {
        let zero = LIMITS
            .check("k", &LaunchShape::linear(0, 32), 0, 1024)
            .unwrap_err();
        assert!(zero.to_string().contains("grid x is 0"), "{zero}");
        let tall = LaunchShape {
            grid: Dim3::xy(1, 70_000),
            block: Dim3::x(32),
            dynamic_shared_bytes: 0,
        };
        assert!(
            LIMITS
                .check("k", &tall, 0, 1024)
                .unwrap_err()
                .to_string()
                .contains("grid y is 70000")
        );
        let greedy = LaunchShape::linear(1, 32).with_dynamic_shared(48 * 1024);
        let error = LIMITS.check("k", &greedy, 4, 1024).unwrap_err().to_string();
        assert!(
            error.contains("49156 bytes of shared memory per block (4 static + 49152 dynamic)"),
            "{error}"
        );
    }

    #[test]
    fn register_limited_kernels_lower_the_thread_limit() {
        let error = LIMITS
            .check("k", &LaunchShape::linear(1, 1024), 0, 768)
            .unwrap_err();
        assert!(error.to_string().contains("limit of 768"), "{error}");
    }
}
