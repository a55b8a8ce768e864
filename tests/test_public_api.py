"""Every import path users had before the layout of issue 25 still gives the same names.

The table is each module's ``__all__`` at commit 9c59841, the last one before the moves: the flat
modules (``synth.torus``, ``synth.certify``, ...) are thin re-exports now, and the names must stay
importable from them, as README's "Library" section promises.  A name may move; it may not vanish.
"""

import importlib

import pytest

#: module -> its ``__all__`` before issue 25
OLD_API = {'synth.baselines': ['BASELINES', 'Baseline', 'SUPPORTED', 'build_baseline'],
     'synth.certificate': ['Certificate', 'FORMAT', 'VERSION', 'base_from_json', 'base_shape', 'base_to_json',
                           'certificate_to_json', 'check_declared_size', 'dumps', 'read_certificate',
                           'write_certificate'],
     'synth.certify': ['EXPLICIT_HARD_LIMIT', 'EXPLICIT_LIMIT', 'MODES', 'Report', 'certify', 'check_certificate',
                       'check_explicit', 'check_file', 'claims_of', 'file_kind'],
     'synth.check': ['Metrics', 'execute', 'measure_explicit', 'measure_symmetric', 'round_lower_bound'],
     'synth.compare': ['Row', 'candidates', 'compare'],
     'synth.cost': ['MAX_SIZE', 'Network', 'PAPER_SIZES', 'format_size', 'goodput', 'goodput_bound', 'model_time',
                    'parse_bandwidth', 'parse_size', 'parse_time'],
     'synth.dualbound': ['CONE_KIND', 'DualBound', 'KIND', 'cone_count_bound', 'khop_dual_bound',
                         'root_stabilizer_perms'],
     'synth.errors': ['FileFormatError', 'GroupError', 'ScheduleError', 'SynthError', 'TopologyError'],
     'synth.exchange': ['bfs_forest_parents', 'exchange_allreduce', 'exchange_roots'],
     'synth.explicit': ['FORMAT', 'MAX_EXPLICIT_BYTES', 'MAX_ROW_BYTES', 'VERSION', 'explicit_lines', 'read_explicit',
                        'write_explicit'],
     'synth.fileio': ['MAX_INT', 'MAX_JSON_BYTES', 'check_writable', 'loads_strict', 'open_regular', 'read_capped',
                      'read_json', 'read_line', 'write_atomic'],
     'synth.group': ['Group', 'named_group', 'torus_gamma', 'torus_translations', 'torus_translations_negation'],
     'synth.hyperx': ['HyperX', 'hyperx', 'hyperx_group', 'hyperx_tree', 'parse_hyperx', 'windmill_parents'],
     'synth.lift': ['lift', 'lifted_weights'],
     'synth.models.balance': ['BalanceResult', 'FAMILIES', 'balance', 'balance_bfs_trees', 'balance_candidates',
                              'balance_exchange_forests'],
     'synth.models.khop': ['KHopResult', 'SOLVERS', 'SOLVER_REVISION', 'solve_khop'],
     'synth.models.khop_family': ['EXACT_MAX_VERTICES', 'ITERATIONS', 'KHopFamily', 'compact_rounds',
                                  'dimension_metric', 'khop_family', 'labelled_tree_schedule', 'orbit_profiles',
                                  'skeletons'],
     'synth.models.xhop': ['XHopResult', 'exchange_depth_threshold', 'solve_xhop'],
     'synth.registry': ['TOPOLOGIES', 'build_topology', 'default_group', 'group_builder', 'group_kinds', 'spec_size'],
     'synth.runtime.explicit_export': ['reemit_explicit'],
     'synth.runtime.mpi': ['DTYPES', 'INSTALL_HINT', 'MODES', 'Prepared', 'RunReport', 'find_mpiexec', 'parse_size',
                           'prepare_run', 'rank_plans', 'run_schedule', 'simulate_run'],
     'synth.runtime.msccl': ['DEFAULT_MAX_BYTES', 'MscclExport', 'MscclLimits', 'NO_SCRATCH_MAX_BYTES', 'PROTOCOLS',
                             'SCRATCH_CAP', 'export_msccl', 'export_summary_json', 'scratch_bytes', 'xml_name'],
     'synth.runtime.msccl_check': ['Algo', 'CheckLimits', 'CheckReport', 'Gpu', 'STEP_TYPES', 'Step', 'ThreadBlock',
                                   'check_xml', 'interpret', 'parse_xml', 'race_check', 'validate'],
     'synth.runtime.plan': ['LAYOUTS', 'Plan', 'build_plan', 'flatten', 'greedy_layout', 'load_schedule',
                            'message_runs'],
     'synth.schedule': ['BaseSchedule', 'Block', 'COPY', 'OPS', 'REDUCE', 'Schedule', 'chunk_elements',
                        'exchange_schedule', 'forest_depths', 'positive_chunks', 'tree_schedule'],
     'synth.solve': ['SolveResult', 'TORUS_GROUPS', 'check_written', 'solve'],
     'synth.sp': ['bfs_parents', 'sp_allreduce'],
     'synth.spineleaf': ['SpineLeaf', 'parse_spine_leaf', 'spine_leaf', 'spine_leaf_group', 'spine_leaf_star'],
     'synth.steinerbound': ['MAX_CELLS', 'MAX_TERMINALS', 'STEINER_KIND', 'excess_tables', 'splits', 'steiner_dual',
                            'terminal_bound'],
     'synth.sweep': ['SweepRow', 'SweepTable', 'cached_depths', 'parse_depths', 'sweep', 'sweep_note'],
     'synth.topology': ['Grid', 'MAX_LINKS', 'MAX_VERTICES', 'Topology', 'check_size'],
     'synth.torus': ['Torus', 'parse_torus', 'shape_sides', 'torus'],
     'synth.trees': ['SOLVER_CLAIM', 'TreeRecord', 'cache_dir', 'khop_tree', 'start_tree', 'tighten', 'tree_base'],
     'synth.usertopo': ['read_topology', 'search_group', 'shortest_path_tree', 'topology_from_json', 'user_group']}


@pytest.mark.parametrize("module", sorted(OLD_API))
def test_old_path_still_exports_its_names(module):
    m = importlib.import_module(module)
    missing = [name for name in OLD_API[module] if not hasattr(m, name)]
    assert not missing, f"{module} lost {missing}"


def test_the_entry_points_users_call():
    from synth.certify import certify  # the old path, on purpose
    from synth.cli import main
    from synth.models.khop import solve_khop

    assert callable(certify) and callable(main) and callable(solve_khop)
