//! Version-compatibility data (`patterns/compat.toml`): which cuDNN a
//! PyTorch wheel bundles, which CUDA and cuDNN a TensorFlow release was
//! tested with, the oldest driver each CUDA release runs on, and the first
//! CUDA and cuDNN releases that support each GPU architecture. Every row
//! names its public source and date. The diagnoser uses the rows as
//! evidence; `cudnnlog explain` shows them.
//!
//! ```
//! let catalog = cudnnlog::Catalog::builtin().unwrap();
//! let compat = catalog.compat();
//! let hopper = compat.arch_of_gpu("NVIDIA H200").unwrap();
//! assert_eq!(hopper.arch, "hopper");
//! ```

use crate::fields::major_minor;
use serde::Deserialize;

/// A PyTorch release's pip wheel for one CUDA variant, and the cuDNN it ships.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TorchBuild {
    /// The PyTorch release, `2.4.0` (no `+cu121` suffix).
    pub torch: String,
    /// The wheel's CUDA variant, major.minor: `12.1` for `+cu121`.
    pub cuda: String,
    /// The cuDNN version the wheel bundles, `9.1.0`.
    pub cudnn: String,
    /// Where the row comes from: the URL of its public source.
    pub source: String,
    /// The release date, `YYYY-MM-DD`.
    pub date: String,
    /// What the other fields leave out (the exact bundled build, how the
    /// date was found); `None` when there is nothing to add.
    #[serde(default)]
    pub note: Option<String>,
}

/// A TensorFlow release and the CUDA and cuDNN it was tested with.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TfBuild {
    /// The TensorFlow release, `2.15.0`.
    pub tensorflow: String,
    /// The CUDA version it was tested with, major.minor (`12.2`).
    pub cuda: String,
    /// The cuDNN version it was tested with, as the table gives it (`8.9`).
    pub cudnn: String,
    /// Where the row comes from: the URL of its public source.
    pub source: String,
    /// The release date, `YYYY-MM-DD`; the 1st of the month when only the
    /// month is known (the note says so).
    pub date: String,
    /// What the other fields leave out (the exact bundled build, how the
    /// date was found); `None` when there is nothing to add.
    #[serde(default)]
    pub note: Option<String>,
}

/// A CUDA release and the oldest Linux driver that runs it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DriverReq {
    /// The CUDA toolkit release, major.minor (`12.4`).
    pub cuda: String,
    /// The oldest Linux x86_64 driver its GA toolkit runs on (`550.54.14`).
    pub min_driver: String,
    /// The oldest driver that runs it through CUDA minor-version
    /// compatibility within its major family (`525.60.13` for 12.x);
    /// `None` where there is none (CUDA 10 and older).
    #[serde(default)]
    pub min_driver_minor_compat: Option<String>,
    /// Where the row comes from: the URL of its public source.
    pub source: String,
    /// The release date, `YYYY-MM-DD`; the built-in rows know the month
    /// only (day 01).
    pub date: String,
    /// What the other fields leave out (the exact bundled build, how the
    /// date was found); `None` when there is nothing to add.
    #[serde(default)]
    pub note: Option<String>,
}

/// A GPU architecture: its compute capabilities, the model names that
/// identify it, and the first CUDA and cuDNN releases that support it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Arch {
    /// The architecture's name, lower case: `ampere`, `hopper`, …
    pub arch: String,
    /// Its compute capabilities, major.minor (`8.0`, `8.6`).
    pub compute_capability: Vec<String>,
    /// Fragments of GPU model names that identify it: case-sensitive
    /// substrings of the names logs print (`H100`, `Tesla T4`).
    pub gpus: Vec<String>,
    /// The first CUDA release with native support for it (`11.8`).
    pub min_cuda: String,
    /// The first cuDNN release with native support for it (`8.6.0`).
    pub min_cudnn: String,
    /// Where the row comes from: the URL of its public source.
    pub source: String,
    /// The date of the `min_cuda` release, `YYYY-MM-DD`; the built-in rows
    /// know the month only (day 01).
    pub date: String,
    /// What the other fields leave out (the exact bundled build, how the
    /// date was found); `None` when there is nothing to add.
    #[serde(default)]
    pub note: Option<String>,
}

/// All compatibility tables.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Compat {
    /// The `[[torch]]` rows: PyTorch pip wheels and the cuDNN each bundles.
    #[serde(default)]
    pub torch: Vec<TorchBuild>,
    /// The `[[tensorflow]]` rows: TensorFlow's tested build configurations.
    #[serde(default)]
    pub tensorflow: Vec<TfBuild>,
    /// The `[[driver]]` rows: the oldest driver each CUDA release runs on.
    #[serde(default)]
    pub driver: Vec<DriverReq>,
    /// The `[[arch]]` rows: GPU architectures and the releases they need.
    #[serde(default)]
    pub arch: Vec<Arch>,
}

impl Compat {
    /// Appends another file's rows.
    ///
    /// ```
    /// use cudnnlog::catalog::Compat;
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let mut compat = Compat::default();
    /// compat.extend(catalog.compat().clone());
    /// assert_eq!(compat.driver.len(), catalog.compat().driver.len());
    /// assert_eq!(compat.driver_for("12.4").unwrap().min_driver, "550.54.14");
    /// ```
    pub fn extend(&mut self, other: Compat) {
        self.torch.extend(other.torch);
        self.tensorflow.extend(other.tensorflow);
        self.driver.extend(other.driver);
        self.arch.extend(other.arch);
    }

    /// The wheels of a PyTorch version (`2.4.0`, `2.4.0+cu121`): the one for
    /// its CUDA variant when the version names it, else all of them.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let compat = catalog.compat();
    /// let cu121 = compat.torch_builds("2.4.0+cu121", None);
    /// assert_eq!((cu121.len(), cu121[0].cuda.as_str(), cu121[0].cudnn.as_str()), (1, "12.1", "9.1.0"));
    /// assert_eq!(compat.torch_builds("2.4.0", Some("12.4.131"))[0].cuda, "12.4");
    /// assert!(compat.torch_builds("2.4.0", None).len() >= 3);
    /// ```
    pub fn torch_builds(&self, version: &str, cuda: Option<&str>) -> Vec<&TorchBuild> {
        let base = version.split('+').next().unwrap_or(version);
        let variant = version
            .split_once("+cu")
            .and_then(|(_, v)| crate::fields::normalize("cuda", &format!("cu{v}")))
            .or_else(|| cuda.map(major_minor));
        let all: Vec<&TorchBuild> = self.torch.iter().filter(|b| b.torch == base).collect();
        match variant {
            Some(v) if all.iter().any(|b| b.cuda == v) => {
                all.into_iter().filter(|b| b.cuda == v).collect()
            }
            _ => all,
        }
    }

    /// The tested build of a TensorFlow version (`2.15.0`, or `2.15`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let tf = catalog.compat().tensorflow_build("2.15").unwrap();
    /// assert_eq!((tf.tensorflow.as_str(), tf.cuda.as_str(), tf.cudnn.as_str()), ("2.15.0", "12.2", "8.9"));
    /// assert!(catalog.compat().tensorflow_build("0.1.0").is_none());
    /// ```
    pub fn tensorflow_build(&self, version: &str) -> Option<&TfBuild> {
        let mm = major_minor(version);
        self.tensorflow
            .iter()
            .find(|b| b.tensorflow == version)
            .or_else(|| {
                self.tensorflow
                    .iter()
                    .find(|b| major_minor(&b.tensorflow) == mm)
            })
    }

    /// The driver requirement of a CUDA release (`12.4`, `12.4.131`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let req = catalog.compat().driver_for("12.4.131").unwrap();
    /// assert_eq!((req.min_driver.as_str(), req.min_driver_minor_compat.as_deref()), ("550.54.14", Some("525.60.13")));
    /// assert!(catalog.compat().driver_for("99.0").is_none());
    /// ```
    pub fn driver_for(&self, cuda: &str) -> Option<&DriverReq> {
        let mm = major_minor(cuda);
        self.driver.iter().find(|d| major_minor(&d.cuda) == mm)
    }

    /// The architecture of a GPU model name as logs print it
    /// (`NVIDIA GeForce RTX 3090`): the longest matching name fragment wins.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let compat = catalog.compat();
    /// assert_eq!(compat.arch_of_gpu("NVIDIA GeForce RTX 3090").unwrap().arch, "ampere");
    /// assert_eq!(compat.arch_of_gpu("NVIDIA A100-SXM4-80GB").unwrap().arch, "ampere");
    /// assert!(compat.arch_of_gpu("Intel UHD Graphics").is_none());
    /// ```
    pub fn arch_of_gpu(&self, gpu: &str) -> Option<&Arch> {
        self.arch
            .iter()
            .flat_map(|a| a.gpus.iter().map(move |g| (a, g)))
            .filter(|(_, g)| gpu.contains(g.as_str()))
            .max_by_key(|(_, g)| g.len())
            .map(|(a, _)| a)
    }

    /// The architecture of a compute capability (`8.6`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let compat = catalog.compat();
    /// assert_eq!(compat.arch_of_capability("9.0").unwrap().arch, "hopper");
    /// assert_eq!(compat.arch_of_capability("8.6").unwrap().min_cuda, "11.0");
    /// assert!(compat.arch_of_capability("sm_86").is_none()); // normalised spelling only
    /// ```
    pub fn arch_of_capability(&self, cc: &str) -> Option<&Arch> {
        self.arch
            .iter()
            .find(|a| a.compute_capability.iter().any(|c| c == cc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Compat {
        toml::from_str(
            r#"
[[torch]]
torch = "2.4.0"
cuda = "12.1"
cudnn = "9.1.0"
source = "s"
date = "2024-07-24"
[[torch]]
torch = "2.4.0"
cuda = "11.8"
cudnn = "9.1.0"
source = "s"
date = "2024-07-24"
[[arch]]
arch = "ampere"
compute_capability = ["8.0", "8.6"]
gpus = ["A10", "A100", "RTX 30"]
min_cuda = "11.0"
min_cudnn = "8.0.0"
source = "s"
date = "2020-05-14"
[[arch]]
arch = "hopper"
compute_capability = ["9.0"]
gpus = ["H100", "H200"]
min_cuda = "11.8"
min_cudnn = "8.6.0"
source = "s"
date = "2022-10-03"
"#,
        )
        .unwrap()
    }

    #[test]
    fn wheels_by_version_and_variant() {
        let c = sample();
        assert_eq!(c.torch_builds("2.4.0+cu121", None).len(), 1);
        assert_eq!(c.torch_builds("2.4.0", None).len(), 2);
        assert_eq!(c.torch_builds("2.4.0", Some("11.8"))[0].cuda, "11.8");
        assert!(c.torch_builds("2.5.0", None).is_empty());
    }

    #[test]
    fn gpu_names_pick_the_longest_fragment() {
        let c = sample();
        assert_eq!(
            c.arch_of_gpu("NVIDIA A100-SXM4-80GB").unwrap().arch,
            "ampere"
        );
        assert_eq!(
            c.arch_of_gpu("NVIDIA GeForce RTX 3090").unwrap().arch,
            "ampere"
        );
        assert_eq!(c.arch_of_gpu("NVIDIA H200").unwrap().arch, "hopper");
        assert!(c.arch_of_gpu("Tesla K80").is_none());
        assert_eq!(c.arch_of_capability("8.6").unwrap().arch, "ampere");
    }
}

#[cfg(test)]
mod examples;
