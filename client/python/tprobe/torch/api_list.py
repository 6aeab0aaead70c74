"""The APIs tprobe hooks at levels L1 and mix, by group.

msprobe's own list, ``support_wrap_ops.yaml``, decides: ``groups()`` reads
the file named by $TPROBE_API_LIST, else the installed msprobe's
(mindstudio-probe) at run time, so tprobe hooks what that msprobe hooks. Otherwise it uses the copy of
the names below, taken from mindstudio-probe 26.2.0 (names are facts;
tests/python/pytorch/api_parity_test.py checks the copy against the installed
msprobe). A name missing from the installed torch is not hooked; a name
tprobe leaves out on purpose is in ``SKIPPED`` with the reason.

Each group maps to an entry prefix: ``{prefix}.{last dotted part}.{N}``.
"""

import importlib.util
import os
from typing import Dict, List, Optional

# Group -> (entry prefix, key in support_wrap_ops.yaml).
PREFIXES = {"Functional": "functional", "Tensor": "tensor", "Torch": "torch",
            "VF": "_VF", "Distributed": "distributed"}

# "Prefix.name" -> why tprobe does not hook it although torch has it.
SKIPPED: Dict[str, str] = {}


FUNCTIONAL = """
conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d
conv_tbc avg_pool1d avg_pool2d avg_pool3d fractional_max_pool2d_with_indices
fractional_max_pool2d fractional_max_pool3d_with_indices
fractional_max_pool3d max_pool1d_with_indices max_pool1d
max_pool2d_with_indices max_pool2d max_pool3d_with_indices max_pool3d
max_unpool1d max_unpool2d max_unpool3d lp_pool2d lp_pool1d
adaptive_max_pool1d_with_indices adaptive_max_pool1d
adaptive_max_pool2d_with_indices adaptive_max_pool2d
adaptive_max_pool3d_with_indices adaptive_max_pool3d adaptive_avg_pool1d
adaptive_avg_pool2d adaptive_avg_pool3d dropout alpha_dropout dropout2d
dropout3d feature_alpha_dropout threshold threshold_ relu relu_ glu hardtanh
hardtanh_ relu6 elu elu_ selu selu_ celu celu_ leaky_relu leaky_relu_ prelu
rrelu rrelu_ logsigmoid gelu hardshrink tanhshrink softsign softplus softmin
softmax gumbel_softmax log_softmax softshrink tanh sigmoid hardsigmoid
linear bilinear silu hardswish embedding embedding_bag batch_norm
instance_norm layer_norm group_norm local_response_norm ctc_loss nll_loss
poisson_nll_loss gaussian_nll_loss kl_div cross_entropy binary_cross_entropy
binary_cross_entropy_with_logits smooth_l1_loss l1_loss mse_loss
margin_ranking_loss hinge_embedding_loss multilabel_margin_loss
soft_margin_loss multilabel_soft_margin_loss cosine_embedding_loss
multi_margin_loss pixel_shuffle pixel_unshuffle channel_shuffle upsample
interpolate upsample_nearest upsample_bilinear grid_sample affine_grid pad
pairwise_distance pdist cosine_similarity one_hot triplet_margin_loss
triplet_margin_with_distance_loss normalize unfold fold
multi_head_attention_forward scaled_dot_product_attention lp_pool3d
dropout1d mish huber_loss
""".split()

TENSOR = """
__add__ __and__ __bool__ __div__ __eq__ __floordiv__ __ge__ __gt__ __iadd__
__iand__ __idiv__ __ifloordiv__ __ilshift__ __imod__ __imul__ __ior__
__ipow__ __irshift__ __isub__ __ixor__ __le__ __lshift__ __lt__ __matmul__
__mod__ __mul__ __ne__ __nonzero__ __or__ __pow__ __radd__ __rdiv__ __rmod__
__rmul__ __ror__ __rpow__ __rshift__ __rsub__ __rxor__ __setitem__ __sub__
__truediv__ __xor__ abs abs_ absolute absolute_ acos acos_ acosh acosh_ add
add_ addbmm addbmm_ addcdiv addcdiv_ addcmul addcmul_ addmm addmm_ addmv
addmv_ addr addr_ adjoint align_as align_to all allclose amax amin aminmax
angle any arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_
arctan arctan2 arctan2_ arctan_ arctanh arctanh_ argmax argmin argsort
argwhere asin asin_ asinh asinh_ atan atan2 atan2_ atan_ atanh atanh_
baddbmm baddbmm_ bernoulli bernoulli_ bfloat16 bincount bitwise_and
bitwise_and_ bitwise_left_shift bitwise_left_shift_ bitwise_not bitwise_not_
bitwise_or bitwise_or_ bitwise_right_shift bitwise_right_shift_ bitwise_xor
bitwise_xor_ bmm bool broadcast_to byte cauchy_ ceil ceil_ cfloat char
cholesky cholesky_inverse cholesky_solve chunk clamp clamp_ clamp_max
clamp_max_ clamp_min clamp_min_ clip clip_ conj_physical copysign copysign_
corrcoef cos cos_ cosh cosh_ count_nonzero cov cummax cummin cumprod
cumprod_ cumsum cumsum_ deg2rad deg2rad_ det diag diag_embed diagflat
diagonal diagonal_scatter diff digamma digamma_ dist div div_ divide divide_
dot double dsplit eig eq eq_ equal erf erf_ erfc erfc_ erfinv erfinv_ exp
exp2 exp2_ exp_ expand expand_as expm1 expm1_ exponential_ fill_
fill_diagonal_ fix fix_ flatten flip fliplr flipud float float_power
float_power_ floor floor_ floor_divide floor_divide_ fmax fmin fmod fmod_
frac frac_ frexp gather gcd gcd_ ge ge_ geometric_ geqrf ger greater
greater_ greater_equal greater_equal_ gt gt_ half hardshrink heaviside
heaviside_ histc histogram hsplit hypot hypot_ i0 i0_ igamma igamma_ igammac
igammac_ index_add index_add_ index_copy index_copy_ index_fill index_fill_
index_put index_put_ index_select inner int inverse isclose isfinite isinf
isnan isneginf isposinf isreal kron kthvalue lcm lcm_ ldexp ldexp_ le le_
lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_ log log10 log10_
log1p log1p_ log2 log2_ log_ log_normal_ log_softmax logaddexp logaddexp2
logcumsumexp logdet logical_and logical_and_ logical_not logical_not_
logical_or logical_or_ logical_xor logical_xor_ logit logit_ logsumexp long
lstsq lt lt_ lu lu_solve map2_ map_ masked_fill masked_fill_ masked_scatter
masked_scatter_ masked_select matmul matrix_exp matrix_power max maximum
mean median min minimum mm mode moveaxis movedim msort mul mul_ multinomial
multiply multiply_ mv mvlgamma mvlgamma_ nan_to_num nan_to_num_ nanmean
nanmedian nanquantile nansum narrow narrow_copy ne ne_ neg neg_ negative
negative_ nextafter nextafter_ nonzero norm normal_ not_equal not_equal_
numpy orgqr ormqr outer permute pinverse polygamma polygamma_ pow pow_ prelu
prod put_ q_zero_point qr quantile rad2deg rad2deg_ ravel reciprocal
reciprocal_ relu relu_ remainder remainder_ renorm renorm_ repeat
repeat_interleave reshape reshape_as resize_ resize_as_ resolve_neg roll
rot90 round round_ rsqrt rsqrt_ scatter scatter_ scatter_add scatter_add_
select sgn sgn_ short sigmoid sigmoid_ sign sign_ signbit sin sin_ sinc
sinc_ sinh sinh_ slice_scatter slogdet smm softmax solve sort split
split_with_sizes sqrt sqrt_ square square_ squeeze squeeze_ sspaddmm std
stft stride sub sub_ subtract sum sum_to_size svd swapaxes swapdims
swapdims_ symeig t t_ take take_along_dim tan tan_ tanh tanh_ tensor_split
tile to topk transpose transpose_ triangular_solve tril tril_ triu triu_
true_divide true_divide_ trunc trunc_ type_as unbind unflatten unfold unique
unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes
unsqueeze unsqueeze_ var vdot view_as vsplit where xlogy xlogy_
""".split()

TORCH = """
linalg.norm linalg.vector_norm linalg.matrix_norm linalg.diagonal linalg.det
linalg.slogdet linalg.cond linalg.matrix_rank linalg.qr linalg.lu
linalg.lu_factor linalg.svd linalg.svdvals linalg.solve linalg.lstsq
linalg.inv linalg.pinv linalg.matrix_exp linalg.matrix_power linalg.cross
linalg.matmul linalg.vecdot linalg.multi_dot linalg.householder_product
linalg.tensorsolve linalg.vander linalg.cholesky_ex linalg.inv_ex
linalg.solve_ex linalg.lu_factor_ex linalg.ldl_factor linalg.ldl_factor_ex
_adaptive_avg_pool2d _add_relu _add_relu_ _aminmax _batch_norm_impl_index
_convolution _foreach_norm _fused_adamw_ _softmax_backward_data abs abs_
absolute acos acos_ acosh acosh_ adaptive_avg_pool1d adaptive_max_pool1d add
addbmm addcdiv addcmul addmm addmv addmv_ addr affine_grid_generator
align_tensors all alpha_dropout alpha_dropout_ amax amin aminmax angle any
arange arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_
arctan arctan2 arctan_ arctanh arctanh_ argmax argmin argsort argwhere asin
asin_ asinh asinh_ atan atan2 atan_ atanh atanh_ atleast_1d atleast_2d
atleast_3d avg_pool1d baddbmm bartlett_window batch_norm_backward_elemt
batch_norm_backward_reduce batch_norm_elemt batch_norm_gather_stats
batch_norm_gather_stats_with_counts batch_norm_stats batch_norm_update_stats
bernoulli bilinear binary_cross_entropy_with_logits bincount binomial
bitwise_and bitwise_not bitwise_or bitwise_xor blackman_window block_diag
bmm broadcast_tensors broadcast_to bucketize cartesian_prod cat cdist ceil
ceil_ celu celu_ chain_matmul channel_shuffle cholesky cholesky_inverse
cholesky_solve choose_qparams_optimized chunk clamp clamp_ clamp_max
clamp_max_ clamp_min clamp_min_ clip clip_ clone column_stack combinations
concat concatenate constant_pad_nd conv1d conv2d conv3d conv_tbc
conv_transpose1d conv_transpose2d conv_transpose3d convolution copysign cos
cos_ cosh cosh_ cosine_embedding_loss cosine_similarity count_nonzero cov
cross ctc_loss cummax cummin cumprod cumsum cumulative_trapezoid deg2rad
deg2rad_ det diag diag_embed diagflat diagonal diagonal_scatter diff digamma
dist div divide dot dropout dropout_ dsmm dsplit dstack eig einsum embedding
embedding_bag embedding_renorm_ eq equal erf erf_ erfc erfc_ erfinv exp exp2
exp2_ exp_ expm1 expm1_ eye feature_alpha_dropout feature_alpha_dropout_
feature_dropout feature_dropout_ fill_ fix fix_ flatten flip fliplr flipud
float_power floor floor_ floor_divide fmax fmin fmod frac frac_ frexp
frobenius_norm full full_like gather gcd gcd_ ge geqrf ger greater
greater_equal grid_sampler grid_sampler_2d grid_sampler_3d group_norm gru
gru_cell gt hamming_window hann_window hardshrink heaviside
hinge_embedding_loss histc histogram histogramdd hsmm hsplit hspmm hstack
hypot i0 i0_ igamma igammac index_add index_copy index_fill index_put
index_put_ index_select inner instance_norm inverse isclose isfinite isin
isinf isnan isneginf isposinf istft kaiser_window kl_div kron kthvalue
layer_norm lcm lcm_ ldexp ldexp_ le lerp less less_equal lgamma linspace log
log10 log10_ log1p log1p_ log2 log2_ log_ log_softmax logaddexp logaddexp2
logcumsumexp logdet logical_and logical_not logical_or logical_xor logit
logit_ logspace logsumexp lstm lstm_cell lstsq lt lu_solve lu_unpack
margin_ranking_loss masked_fill masked_scatter masked_select matmul
matrix_exp matrix_power matrix_rank max max_pool1d max_pool1d_with_indices
max_pool2d max_pool3d maximum mean median min minimum mm mode moveaxis
movedim msort mul multinomial multiply mv mvlgamma nan_to_num nan_to_num_
nanmean nanmedian nanquantile nansum narrow narrow_copy native_batch_norm
native_group_norm native_layer_norm native_norm ne neg neg_ negative
negative_ nextafter nonzero norm norm_except_dim normal not_equal
nuclear_norm outer pairwise_distance pdist permute pinverse pixel_shuffle
pixel_unshuffle poisson poisson_nll_loss polar polygamma pow prelu prod qr
quantile rad2deg rad2deg_ range ravel real reciprocal reciprocal_ relu relu_
remainder renorm repeat_interleave reshape resize_as_ resolve_neg roll rot90
round round_ row_stack rrelu rrelu_ rsqrt rsqrt_ rsub saddmm scalar_tensor
scatter scatter_add searchsorted select selu selu_ sgn sigmoid sigmoid_ sign
signbit sin sin_ sinc sinc_ sinh sinh_ slogdet smm softmax solve sort
sparse_coo_tensor split split_with_sizes spmm sqrt sqrt_ square square_
squeeze sspaddmm stack std std_mean stft sub subtract sum svd swapaxes
swapdims symeig t take take_along_dim tan tan_ tanh tanh_ tensor_split
tensordot threshold threshold_ tile topk transpose trapz triangular_solve
tril tril_indices triplet_margin_loss triu triu_indices true_divide trunc
trunc_ unbind unflatten unique_consecutive unsafe_chunk unsafe_split
unsafe_split_with_sizes unsqueeze vander var var_mean vdot vsplit vstack
where xlogy xlogy_
""".split()

VF = """
lstm
""".split()

DISTRIBUTED = """
send recv broadcast all_reduce reduce all_gather gather isend irecv scatter
reduce_scatter _reduce_scatter_base _all_gather_base all_to_all_single
all_to_all all_gather_into_tensor reduce_scatter_tensor batch_isend_irecv
""".split()

_COPY = {"Functional": FUNCTIONAL, "Tensor": TENSOR, "Torch": TORCH,
         "VF": VF, "Distributed": DISTRIBUTED}
# Where msprobe keeps the list: 26.x, then 8.x.
_YAML_PATHS = (("pytorch", "dump", "api_dump", "support_wrap_ops.yaml"),
               ("pytorch", "hook_module", "support_wrap_ops.yaml"))


def installed_msprobe_yaml() -> Optional[str]:
    """The support_wrap_ops.yaml of the installed msprobe, or None. msprobe
    is located, not imported (importing it patches nothing, but is slow)."""
    try:
        spec = importlib.util.find_spec("msprobe")
    except (ImportError, ValueError):
        return None
    for root in (spec.submodule_search_locations or []) if spec else []:
        for parts in _YAML_PATHS:
            path = os.path.join(root, *parts)
            if os.path.isfile(path):
                return path
    return None


def _from_yaml(path: str) -> Optional[Dict[str, List[str]]]:
    try:
        import yaml
        with open(path, encoding="utf-8") as f:
            content = yaml.safe_load(f)
        return {group: [str(name) for name in content.get(key) or []]
                for group, key in PREFIXES.items()}
    except Exception:  # noqa: BLE001 - an unreadable list: use the copy
        return None


def groups() -> Dict[str, List[str]]:
    """Group prefix -> API names: $TPROBE_API_LIST's or the installed
    msprobe's list when there is one, else the copy in this file."""
    path = os.environ.get("TPROBE_API_LIST") or installed_msprobe_yaml()
    found = _from_yaml(path) if path else None
    return found if found is not None else dict(_COPY)
