"""The APIs tprobe hooks at levels L1 and mix: msprobe's support_wrap_ops.yaml
(mindstudio-probe 8.3.3, pytorch/hook_module/), taken as data.

One difference: ``Tensor.__getitem__`` is left out. msprobe 8.3.3 on
PyTorch 1.13 records no ``Tensor.__getitem__`` calls (the golden trees of
train_tiny_gpt.py slice tensors inside the dump window and have no such
entry), and msprobe's later lists drop it.

Each group maps to an entry prefix: ``{prefix}.{last dotted part}.{N}``.
"""

FUNCTIONAL = """
conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d
conv_tbc avg_pool1d avg_pool2d avg_pool3d
fractional_max_pool2d_with_indices fractional_max_pool2d
fractional_max_pool3d_with_indices fractional_max_pool3d
max_pool1d_with_indices max_pool1d max_pool2d_with_indices max_pool2d
max_pool3d_with_indices max_pool3d max_unpool1d max_unpool2d max_unpool3d
lp_pool2d lp_pool1d adaptive_max_pool1d_with_indices adaptive_max_pool1d
adaptive_max_pool2d_with_indices adaptive_max_pool2d
adaptive_max_pool3d_with_indices adaptive_max_pool3d adaptive_avg_pool1d
adaptive_avg_pool2d adaptive_avg_pool3d dropout alpha_dropout dropout2d
dropout3d feature_alpha_dropout threshold threshold_ relu relu_ glu
hardtanh hardtanh_ relu6 elu elu_ selu selu_ celu celu_ leaky_relu
leaky_relu_ prelu rrelu rrelu_ logsigmoid gelu hardshrink tanhshrink
softsign softplus softmin softmax gumbel_softmax log_softmax softshrink
tanh sigmoid hardsigmoid linear bilinear silu hardswish embedding
embedding_bag batch_norm instance_norm layer_norm group_norm
local_response_norm ctc_loss nll_loss poisson_nll_loss gaussian_nll_loss
kl_div cross_entropy binary_cross_entropy binary_cross_entropy_with_logits
smooth_l1_loss l1_loss mse_loss margin_ranking_loss hinge_embedding_loss
multilabel_margin_loss soft_margin_loss multilabel_soft_margin_loss
cosine_embedding_loss multi_margin_loss pixel_shuffle pixel_unshuffle
channel_shuffle upsample interpolate upsample_nearest upsample_bilinear
grid_sample affine_grid pad pairwise_distance pdist cosine_similarity
one_hot triplet_margin_loss triplet_margin_with_distance_loss normalize
unfold fold multi_head_attention_forward scaled_dot_product_attention
lp_pool3d dropout1d mish huber_loss
""".split()

TENSOR = """
__add__ __and__ __bool__ __div__ __eq__ __ge__ __gt__ __iadd__ __iand__
__idiv__ __ifloordiv__ __ilshift__ __imod__ __imul__ __ior__ __irshift__
__isub__ __ixor__ __lshift__ __matmul__ __mod__ __mul__ __nonzero__ __or__
__radd__ __rmul__ __rshift__ __setitem__ __sub__ __truediv__ __xor__
__pow__ abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ addbmm
addbmm_ addcdiv addcdiv_ addcmul addcmul_ addmm addmm_ addmv addmv_ addr
addr_ align_as align_to all allclose amax amin angle any arccos arccos_
arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan_ arctanh
arctanh_ argmax argmin argsort asin asin_ asinh asinh_ atan atan2 atan2_
atan_ atanh atanh_ baddbmm baddbmm_ bernoulli bernoulli_ bincount
bitwise_and bitwise_and_ bitwise_not bitwise_not_ bitwise_or bitwise_or_
bitwise_xor bitwise_xor_ bmm broadcast_to cauchy_ ceil ceil_ cholesky chunk
clamp cholesky_solve cholesky_inverse clamp_ clamp_max clamp_max_ clip
clamp_min clamp_min_ clip_ copysign copysign_ cos cos_ cosh cosh_
count_nonzero cummax cummin cumprod cumprod_ cumsum cumsum_ deg2rad
deg2rad_ det diag diag_embed diagflat diagonal diff dist digamma digamma_
div div_ divide divide_ dot eig eq eq_ erf equal erf_ erfc erfc_ erfinv
erfinv_ exp exp2 exp2_ expm1 exp_ expm1_ exponential_ fill_ fix
fill_diagonal_ fix_ flip fliplr flatten flipud float_power float_power_
floor floor_ floor_divide floor_divide_ fmax fmin fmod fmod_ frac frac_
gather gcd gcd_ ge ge_ geometric_ geqrf ger greater greater_ gt gt_
greater_equal greater_equal_ hardshrink heaviside heaviside_ histc hypot
hypot_ igamma igamma_ igammac igammac_ index_add index_add_ inverse
index_copy index_copy_ index_fill index_fill_ index_put index_put_ inner
index_select isclose isfinite isinf isnan isneginf isposinf isreal kron
kthvalue lcm lcm_ ldexp ldexp_ le le_ lerp lerp_ where less less_
less_equal less_equal_ lgamma lgamma_ log log10 log10_ log1p log1p_ log2
log2_ log_ log_normal_ log_softmax logcumsumexp logdet logaddexp logaddexp2
logical_and logical_and_ logical_not logit logical_not_ logical_or
logical_or_ logical_xor logical_xor_ logit_ logsumexp lstsq lt lt_ lu_solve
map2_ map_ masked_fill matmul masked_fill_ masked_scatter masked_scatter_
masked_select matrix_exp max maximum mean matrix_power median min minimum
mm mode msort mul mul_ multinomial multiply multiply_ mv mvlgamma mvlgamma_
nansum narrow narrow_copy ne ne_ neg neg_ negative negative_ nonzero norm
normal_ not_equal not_equal_ permute pinverse polygamma pow pow_ polygamma_
prelu prod put_ rad2deg rad2deg_ ravel reciprocal reciprocal_ relu relu_
remainder repeat_interleave reshape remainder_ renorm renorm_ repeat
reshape_as resize_ resize_as_ roll rot90 round round_ rsqrt rsqrt_ scatter
scatter_ scatter_add scatter_add_ select sgn sgn_ sigmoid sigmoid_ sign
sign_ signbit sin sin_ sinc sinc_ sinh sinh_ slogdet smm softmax solve sort
split_with_sizes sqrt sqrt_ square square_ squeeze squeeze_ sspaddmm std
sub sub_ sum sum_to_size svd symeig t t_ take tan tan_ tanh tanh_
tensor_split tile topk transpose transpose_ triangular_solve tril tril_
triu true_divide triu_ true_divide_ trunc trunc_ type_as unbind unflatten
unfold unsafe_chunk unsqueeze unsafe_split unsafe_split_with_sizes var vdot
unsqueeze_ view_as xlogy xlogy_ split conj stft conj_physical half
new_empty ccol_indices nan_to_num dsplit orgqr put bitwise_left_shift_
coalesce arctan2 histogram q_zero_point slice_scatter adjoint slice_inverse
ormqr bitwise_right_shift_ nanquantile lu sparse_mask quantile arctan2_ qr
diagonal_scatter corrcoef vsplit aminmax
""".split()

TORCH = """
linalg.norm linalg.vector_norm linalg.matrix_norm linalg.diagonal
linalg.det linalg.slogdet linalg.cond linalg.matrix_rank linalg.qr
linalg.lu linalg.lu_factor linalg.svd linalg.svdvals linalg.solve
linalg.lstsq linalg.inv linalg.pinv linalg.matrix_exp linalg.matrix_power
linalg.cross linalg.matmul linalg.vecdot linalg.multi_dot
linalg.householder_product linalg.tensorsolve linalg.vander
linalg.cholesky_ex linalg.inv_ex linalg.solve_ex linalg.lu_factor_ex
linalg.ldl_factor linalg.ldl_factor_ex _adaptive_avg_pool2d _add_relu
_add_relu_ _aminmax _batch_norm_impl_index _convolution _foreach_norm
_softmax_backward_data abs abs_ absolute acos acos_ acosh acosh_
adaptive_avg_pool1d adaptive_max_pool1d add addbmm addcdiv addcmul addmm
addmv addmv_ addr amax affine_grid_generator align_tensors all
alpha_dropout amin alpha_dropout_ angle any arange arccos arccos_ arccosh
arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan_ arctanh arctanh_
argmax argmin argsort asin asin_ asinh asinh_ atan atan2 atan_ atanh atanh_
atleast_1d atleast_2d atleast_3d avg_pool1d baddbmm bartlett_window
batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt
batch_norm_gather_stats batch_norm_gather_stats_with_counts bernoulli
batch_norm_stats batch_norm_update_stats bilinear bincount binomial
binary_cross_entropy_with_logits bitwise_and bitwise_not bitwise_or
bitwise_xor blackman_window block_diag bmm broadcast_tensors broadcast_to
bucketize cartesian_prod cat cdist ceil ceil_ celu celu_ chain_matmul
channel_shuffle cholesky cholesky_inverse cholesky_solve
choose_qparams_optimized chunk clamp clamp_ clamp_max clamp_max_ clamp_min
clamp_min_ clip clip_ clone column_stack combinations concat concatenate
constant_pad_nd conv1d conv2d conv3d conv_tbc conv_transpose1d
conv_transpose2d conv_transpose3d cos convolution copysign cos_ cosh cosh_
cosine_embedding_loss cosine_similarity count_nonzero cov cross ctc_loss
cummax cummin cumprod cumsum deg2rad deg2rad_ det diag diag_embed diff
diagflat diagonal digamma dist div divide dot dropout dropout_ dsmm dstack
eig einsum embedding embedding_bag embedding_renorm_ eq equal erf erf_ erfc
erfc_ erfinv exp exp2 exp2_ exp_ expm1 expm1_ eye feature_dropout
feature_alpha_dropout feature_alpha_dropout_ feature_dropout_ fix fill_
fix_ flatten flip fliplr flipud float_power floor floor_ floor_divide fmax
fmin fmod frac frac_ full frobenius_norm full_like gather gcd gcd_ ge geqrf
ger greater greater_equal grid_sampler grid_sampler_2d group_norm
grid_sampler_3d gru gru_cell gt hamming_window hann_window hardshrink
heaviside hinge_embedding_loss histc hsmm hspmm hstack hypot igamma igammac
index_add index_copy inner index_fill index_put index_put_ index_select
instance_norm inverse isclose isfinite isinf isnan isneginf isposinf istft
kaiser_window kl_div kron kthvalue layer_norm lcm lcm_ ldexp ldexp_ le lerp
less less_equal lgamma linspace log log10 log10_ log1p log1p_ log2 log2_
log_softmax log_ logaddexp logaddexp2 logcumsumexp logdet logical_and
logical_not logical_or logical_xor logit logit_ logspace logsumexp lstm
lstm_cell lstsq lt lu_solve lu_unpack masked_fill margin_ranking_loss
masked_scatter masked_select matrix_exp matmul matrix_power matrix_rank max
max_pool1d max_pool2d max_pool1d_with_indices max_pool3d maximum mean
median min minimum mm mode moveaxis movedim msort mul multinomial multiply
mv mvlgamma nan_to_num nan_to_num_ nanmedian nansum narrow
native_batch_norm native_group_norm narrow_copy native_layer_norm
native_norm ne neg negative neg_ negative_ nextafter nonzero norm
norm_except_dim normal not_equal nuclear_norm ones_like outer
pairwise_distance pdist permute pinverse pixel_shuffle pixel_unshuffle
poisson poisson_nll_loss polar polygamma pow prelu prod qr quantile rad2deg
rad2deg_ range ravel real reciprocal relu reciprocal_ relu_ remainder
renorm repeat_interleave reshape resize_as_ roll rot90 round round_ rrelu
rrelu_ rsqrt row_stack rsqrt_ rsub saddmm scalar_tensor scatter select
scatter_add searchsorted selu selu_ sgn sigmoid sigmoid_ sign signbit sin
sin_ sinc sinc_ sinh sinh_ slogdet smm softmax solve sort sparse_coo_tensor
square split split_with_sizes spmm sqrt sqrt_ square_ squeeze sspaddmm
stack std std_mean stft sub subtract sum svd swapaxes swapdims symeig t
take take_along_dim tan tan_ tanh tanh_ tensordot tensor_split threshold
threshold_ tile topk transpose trapz triangular_solve tril tril_indices
triplet_margin_loss triu triu_indices true_divide trunc trunc_
unique_consecutive xlogy unbind unsafe_chunk unsafe_split vander var vdot
unsafe_split_with_sizes unsqueeze var_mean vstack where xlogy_
""".split()

VF = ["lstm"]

DISTRIBUTED = """
send recv broadcast all_reduce reduce all_gather gather isend irecv scatter
reduce_scatter _reduce_scatter_base _all_gather_base all_to_all_single
all_to_all all_gather_into_tensor reduce_scatter_tensor
""".split()
