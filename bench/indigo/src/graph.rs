//! The input graphs, in compressed sparse rows (`nindex`: each vertex's first edge, plus one
//! past the last; `nlist`: the edges' heads), small enough for the emulator and shaped so that
//! each planted bug happens on some and not on others.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

use crate::code::DataType;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    pub name: &'static str,
    pub nindex: Vec<i32>,
    pub nlist: Vec<i32>,
}

impl Graph {
    fn from_adjacency(name: &'static str, adjacency: &[Vec<usize>]) -> Self {
        let mut nindex = vec![0];
        let mut nlist = Vec::new();
        for heads in adjacency {
            nlist.extend(heads.iter().map(|&head| head as i32));
            nindex.push(nlist.len() as i32);
        }
        Graph {
            name,
            nindex,
            nlist,
        }
    }

    fn undirected(
        name: &'static str,
        nodes: usize,
        edges: impl IntoIterator<Item = (usize, usize)>,
    ) -> Self {
        let mut adjacency = vec![Vec::new(); nodes];
        for (a, b) in edges {
            if a != b && !adjacency[a].contains(&b) {
                adjacency[a].push(b);
                adjacency[b].push(a);
            }
        }
        for heads in &mut adjacency {
            heads.sort_unstable();
        }
        Self::from_adjacency(name, &adjacency)
    }

    pub fn nodes(&self) -> usize {
        self.nindex.len() - 1
    }

    pub fn edges(&self) -> usize {
        self.nlist.len()
    }

    pub fn neighbours(&self, v: usize) -> &[i32] {
        &self.nlist[self.nindex[v] as usize..self.nindex[v + 1] as usize]
    }

    /// Vertex `v`'s value in `data1`: small distinct-ish whole numbers, exact in every type.
    pub fn value(v: usize) -> u32 {
        1 + ((v as u32 * 37 + 11) % 97)
    }

    /// Writes `nindex.bin`, `nlist.bin` and `data1.<type>.bin` for every type into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let ints = |values: &[i32]| {
            values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
        };
        std::fs::write(dir.join("nindex.bin"), ints(&self.nindex))?;
        std::fs::write(dir.join("nlist.bin"), ints(&self.nlist))?;
        for ty in DataType::ALL {
            let data: Vec<u8> = (0..self.nodes())
                .flat_map(|v| ty.bytes(Self::value(v)))
                .collect();
            std::fs::write(dir.join(format!("data1.{}.bin", ty.spec())), data)?;
        }
        Ok(())
    }
}

/// The graphs every code runs on.
pub fn all_graphs() -> Vec<Graph> {
    let path = |nodes: usize| (1..nodes).map(|v| (v - 1, v));
    let grid = |side: usize| {
        (0..side * side).flat_map(move |v| {
            let right = (v % side + 1 < side).then_some((v, v + 1));
            let down = (v + side < side * side).then_some((v, v + side));
            right.into_iter().chain(down)
        })
    };
    let mut random = ChaCha8Rng::seed_from_u64(7);
    let random_edges: Vec<(usize, usize)> = (0..150)
        .map(|_| (random.random_range(0..50), random.random_range(0..50)))
        .collect();
    let directed_ring: Vec<Vec<usize>> = (0..128).map(|v| vec![(v + 1) % 128]).collect();
    let matching: Vec<Vec<usize>> = (0..64)
        .map(|v| if v % 2 == 0 { vec![v + 1] } else { vec![] })
        .collect();
    vec![
        // One directed edge: nothing is shared, and a one-shot launch has idle threads.
        Graph::from_adjacency("pair", &[vec![1], vec![]]),
        // A directed cycle of 128: one in-edge and one out-edge each; 128 vertices fill whole
        // blocks.
        Graph::from_adjacency("ring_dir_128", &directed_ring),
        // 32 directed edges between disjoint pairs: in-degree at most one, half the vertices
        // without edges.
        Graph::from_adjacency("matching_64", &matching),
        Graph::undirected("chain_12", 12, path(12)),
        // A directed path of 200 vertices: two blocks of threads, one in-edge each.
        Graph::from_adjacency(
            "path_dir_200",
            &(0..200)
                .map(|v| if v + 1 < 200 { vec![v + 1] } else { vec![] })
                .collect::<Vec<_>>(),
        ),
        // One hub joined to 16 leaves: every leaf updates the hub.
        Graph::undirected("star_17", 17, (1..17).map(|leaf| (0, leaf))),
        Graph::undirected("grid_6x6", 36, grid(6)),
        Graph::undirected(
            "clique_7",
            7,
            (0..7).flat_map(|a| (0..a).map(move |b| (a, b))),
        ),
        // A complete binary tree of depth 4.
        Graph::undirected("tree_31", 31, (1..31).map(|v| ((v - 1) / 2, v))),
        // 150 seeded random edge draws over 50 vertices.
        Graph::undirected("random_50", 50, random_edges),
    ]
}
